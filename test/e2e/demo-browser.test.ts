import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { slackDateText } from '../../src/demo/render.js';
import { DEMO_BALANCES, DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { groupDigits } from '../../src/views/figures.js';
import {
  botMessage,
  demo,
  MAIN,
  page,
  READER_ZONE,
  requested,
  SCREENSHOT,
  scratchDir,
  send,
  shotBeside,
  useDemoBrowser,
} from '../support/demo-browser.js';

/**
 * `npm start` on a fresh clone with nothing configured: the local demo, used in a real browser
 * (Debian's Chromium driven by playwright-core). Started as `npm start` starts it after building
 * (`node dist/main.js`), in a scratch directory (no .env) with an empty environment.
 */

const OPEN = DEMO_INVOICE_IDS.open;

useDemoBrowser();

describe('the local demo in a browser', () => {
  it('says loudly, first, that this is the local demo and where to open it', () => {
    expect(demo.output[0]).toContain('LOCAL DEMO');
    const addressLine = demo.output.findIndex((line) => line.includes(demo.url));
    expect(addressLine).toBeGreaterThan(0);
    expect(addressLine).toBeLessThan(8);
    expect(demo.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
  });

  it('/balance: the sandbox’s amounts digit for digit, only to you', async () => {
    await send('/balance');
    const reply = await botMessage('Balance across all projects');
    await expect(reply.locator('.only-you').textContent()).resolves.toBe('Only visible to you');
    const text = await reply.innerText();
    // Every funded amount grouped for reading, every digit kept; the two at 0 counted, not listed.
    for (const entry of DEMO_BALANCES.filter((e) => !/^0(\.0*)?$/.test(e.balance.toString())))
      expect(text).toContain(`${groupDigits(entry.balance.toString())} ${entry.id}`);
    expect(text).toContain('1,520.5 USDT-TRC20');
    expect(text).toContain('and 2 more at 0');
    // "read <!date^…>" in the reader's zone, not the UTC fallback the message carries.
    const time = reply.locator('.bk-context time.bk-date');
    const [seconds, format] = await Promise.all([
      time.getAttribute('data-ts'),
      time.getAttribute('data-format'),
    ]);
    expect(await time.textContent()).toBe(
      slackDateText(Number(seconds), format ?? '', Date.now(), READER_ZONE, 'en-US'),
    );
    expect(await time.textContent()).not.toMatch(/Z$/);
  });

  it('/invoice, Watch, the customer pays in the side panel: the live card changes, its thread says so within seconds, and the watch ends', async () => {
    await send(`/invoice ${OPEN}`);
    const card = await botMessage('Order #1042 — annual support plan');
    const content = card.locator(':scope > .msg-body > .msg-content');
    expect(await card.locator('.only-you').count()).toBe(0);
    expect(await content.innerText()).toContain('Payment\nNot paid');

    await content.getByRole('button', { name: 'Watch' }).click();
    const live = card.locator('.thread > .msg').filter({ hasText: 'Watched since' });
    await live.waitFor({ timeout: 10_000 });
    const started = await botMessage('its live card is in the thread of the card you clicked');
    expect(await started.locator('.only-you').count()).toBe(1);

    // While it runs, the App Home lists the watch.
    await page.locator('.nav[data-tab="home"]').click();
    const home = page.locator('#home-view');
    await home.filter({ hasText: 'Your watches (1)' }).waitFor({ timeout: 10_000 });
    expect(await home.innerText()).toContain('Order #1042 — annual support plan');
    expect(await home.innerText()).toContain('Open · Not paid');
    await page.locator('.nav[data-tab="channel"]').click();

    const paidAt = Date.now();
    await page.locator(`[data-invoice-card="${OPEN}"]`).getByRole('button', { name: 'Mark paid' }).click();
    const notice = card.locator('.thread > .msg').filter({ hasText: 'changed:' });
    await notice.waitFor({ timeout: 8_000 });
    await live.locator('.edited').waitFor({ timeout: 8_000 });
    const ms = Date.now() - paidAt;
    expect(await notice.innerText()).toContain('@you Order #1042 — annual support plan changed:');
    expect(await notice.innerText()).toContain('Status: Open → Closed');
    expect(await notice.innerText()).toContain('Payment: Not paid → Paid');
    expect(await notice.innerText()).toContain(
      'No longer watching Order #1042 — annual support plan: it no longer awaits payment',
    );
    // The thread: the live card, then one reply with the change and the end.
    const thread = await card.locator('.thread > .msg').allInnerTexts();
    expect(thread).toHaveLength(2);
    expect(thread[1]).toContain('changed:');
    // Paid is final: the live card shows it, the watch over, and offers no Stop.
    const liveContent = live.locator('.msg-content');
    expect(await liveContent.innerText()).toContain('Payment\nPaid');
    expect(await liveContent.innerText()).toContain('No longer watched since');
    expect(await liveContent.getByRole('button', { name: 'Stop watching' }).count()).toBe(0);
    expect(ms).toBeLessThan(6000);
    console.log(`demo: the watch's reply, its end and the card edit showed ${ms} ms after the payment`);

    // Refresh replaces the card in place: the same message, now paid, no longer offering Watch.
    const cards = await page.locator('#feed > .msg').count();
    await content.getByRole('button', { name: 'Refresh' }).click();
    await content.filter({ hasText: 'refreshed' }).waitFor({ timeout: 10_000 });
    expect(await content.innerText()).toContain('Payment\nPaid');
    expect(await content.getByRole('button', { name: 'Watch' }).count()).toBe(0);
    expect(await page.locator('#feed > .msg').count()).toBe(cards);
  }, 60_000);

  it('a pasted payment link is unfurled; the message shortcut shares the invoice in the thread', async () => {
    await send(`Could you check ${await paymentLink(DEMO_INVOICE_IDS.expired)} please?`);
    const pasted = page.locator('#feed > .msg').filter({ hasText: 'Could you check' }).last();
    await pasted
      .locator('.unfurl')
      .filter({ hasText: 'Order #1039 — gift card' })
      .waitFor({ timeout: 10_000 });

    await pasted.locator('.msg-body > .shortcut').click();
    const answer = await botMessage('Only you see this');
    await answer.getByRole('button', { name: 'Share in thread' }).click();
    await pasted
      .locator('.thread > .msg .bk-header')
      .filter({ hasText: 'Order #1039 — gift card' })
      .waitFor({ timeout: 10_000 });
  }, 60_000);

  it('an invoice card is a Work Object: a click on it opens its side panel, drawn by the page (issue 41)', async () => {
    // The unfurl above carries one too.
    expect(
      await page.locator('.unfurl .wo-card').filter({ hasText: 'Order #1039 — gift card' }).count(),
    ).toBe(1);
    await send(`/invoice ${DEMO_INVOICE_IDS.paid}`);
    const card = await botMessage('Order #1041 — hardware wallet');
    const object = card.locator(':scope > .msg-body > .wo-card');
    expect(await object.innerText()).toMatch(/Status\s+Closed[\s\S]*Payment\s+Paid/);
    await object.click();
    const pane = page.locator('.flexpane');
    await pane.filter({ hasText: 'Accepted methods' }).waitFor({ timeout: 10_000 });
    const text = await pane.innerText();
    for (const words of [
      'Order #1041 — hardware wallet',
      'Fee',
      'Shop',
      'Sent by e-mail',
      'Not watched',
      'States seen',
    ])
      expect(text).toContain(words);
    expect(await pane.getByRole('link', { name: 'Open payment page' }).count()).toBe(1);
    await pane.getByRole('button', { name: 'Refresh' }).click();
    await pane.filter({ hasText: 'Accepted methods' }).waitFor({ timeout: 10_000 });
    await page.screenshot({ path: shotBeside('panel') });
    await pane.getByRole('button', { name: 'Close' }).click();
    await pane.waitFor({ state: 'detached', timeout: 10_000 });
  }, 60_000);

  it('the App Home shows your balance, counts what is at 0 in one line, and no watch once the invoice is paid', async () => {
    await page.locator('.nav[data-tab="home"]').click();
    const home = page.locator('#home-view');
    await home.filter({ hasText: 'Your watches (0)' }).waitFor({ timeout: 10_000 });
    const text = await home.innerText();
    // The balance, above the week's coin menu (which offers every coin the readings hold).
    const [balance = ''] = text.split('Balance over the week');
    expect(balance).toContain('0.0123456 BTC');
    expect(balance).toContain('and 2 more at 0');
    expect(balance).not.toMatch(/\b(ETH|TRX)\b/);
    expect(text).toContain('You watch no invoice');
    await page.locator('.nav[data-tab="channel"]').click();
  });

  it('with the payments feed on, the App Home shows a week of one coin ending at its balance, every digit, with a menu of the coins', async () => {
    await send('/balance subscribe');
    await botMessage('turned on the payments feed');
    await page.locator('.nav[data-tab="home"]').click();
    const home = page.locator('#home-view');
    await home.filter({ hasText: 'Payments feeds (1)' }).waitFor({ timeout: 10_000 });
    expect(await home.locator('select.bk-select option').allInnerTexts()).toEqual(
      expect.arrayContaining(['BTC', 'USDT-TRC20', 'DOGE']),
    );
    // A point a day (the demo's sample week, then the feed's own reading): the last is the balance now.
    const [balance = '', week = ''] = (await home.innerText()).split('Balance over the week');
    const points = [...week.matchAll(/^[A-Z][a-z]{2} \d{1,2} · (\S+ \S+)$/gm)].map((m) => m[1]);
    expect(points).toHaveLength(8);
    expect(balance).toContain(`\n${points.at(-1)}\n`);
    await page.locator('.nav[data-tab="channel"]').click();
  });
  it('the feed’s Settings opens a modal the page draws: a wrong minimum is answered under its box, Save is said in the channel', async () => {
    await send('/balance subscribe');
    const confirmation = await botMessage('turned on the payments feed');
    await confirmation.locator('.bk-button', { hasText: 'Settings' }).click();
    const modal = page.locator('#modal-form');
    await modal.waitFor({ timeout: 10_000 });
    expect(await modal.locator('.modal-title').innerText()).toBe('Feed settings');
    expect(await modal.locator('[data-block-id="feed_digest_time"] input[type="time"]').inputValue()).toBe(
      '09:00',
    );
    const minimums = modal.locator('[data-block-id="feed_minimums"] textarea');
    await minimums.fill('BTC 0,001');
    await modal.locator('[data-block-id="feed_style"] input[value="condensed"]').check();
    await modal.locator('[data-block-id="feed_coins"] select').selectOption(['BTC']);
    await modal.locator('button[type="submit"]').click();
    await modal
      .locator('.bk-input-error', { hasText: 'Line 1: 0,001 is not an exact amount' })
      .waitFor({ timeout: 10_000 });
    await page.screenshot({ path: shotBeside('settings') });
    // What was typed and picked is still there, as in Slack.
    expect(await minimums.inputValue()).toBe('BTC 0,001');
    expect(await modal.locator('[data-block-id="feed_style"] input[value="condensed"]').isChecked()).toBe(
      true,
    );
    await minimums.fill('BTC 0.001');
    await modal.locator('button[type="submit"]').click();
    await page.locator('#modal').waitFor({ state: 'hidden', timeout: 10_000 });
    const said = await botMessage('set the minimum for BTC to 0.001');
    expect(await said.locator('.msg-content').innerText()).toBe(
      '@you chose the coins posted: BTC; set the minimum for BTC to 0.001; made the posts condensed.',
    );
  }, 60_000);

  it('posts today’s digest now from the side panel: the real digest job posts it, with a chart of the sample week ending at the balance now', async () => {
    await page.locator('.panel').getByText('sample', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Post today’s digest now' }).click();
    const digest = await botMessage('Daily balance digest', 40_000);
    const charts = digest.locator('figure.bk-chart');
    await charts.locator('svg').first().waitFor({ timeout: 10_000 });
    const titles = await charts.locator('figcaption strong').allInnerTexts();
    expect(titles.length).toBeGreaterThanOrEqual(1);
    for (const title of titles) expect(title).toMatch(/^\S+ balance, last 7 days$/);
    // A point a day for the week, the last one the coin's balance now as the digest lists it.
    const first = charts.first().locator('svg');
    expect(await first.getAttribute('aria-label')).toBe(titles[0]);
    const dots = await first.locator('circle title').allTextContents();
    expect(dots).toHaveLength(8);
    const [, coin = '', now = ''] = /^(\S+) \w+ \d+: (\S+)$/.exec(dots.at(-1) ?? '') ?? [];
    const listed = new RegExp(`\\n([\\d,.]+) ${coin} · `).exec(await digest.innerText())?.[1];
    expect(listed?.replaceAll(',', '')).toBe(now);
    expect(await page.locator('.digest-error').innerText()).toBe('');

    await digest.screenshot({ path: shotBeside('digest') });
    // The README's picture: the channel with the digest and its chart, the invoice card above it.
    await digest.scrollIntoViewIfNeeded();
    await page.screenshot({ path: SCREENSHOT });
    await page.locator('.nav[data-tab="home"]').click();
    await page.locator('#home-view').filter({ hasText: 'Balance over the week' }).waitFor();
    await page.screenshot({ path: shotBeside('home') });
    await page.locator('.nav[data-tab="channel"]').click();
  }, 90_000);

  it('is usable 480 pixels wide: the message box and Send in view and uncovered, the side panel below', async () => {
    await page.setViewportSize({ width: 480, height: 800 });
    try {
      await page.evaluate('window.scrollTo(0, 0)');
      for (const target of [page.locator('#message'), page.getByRole('button', { name: 'Send' })]) {
        const box = await target.boundingBox();
        if (!box) throw new Error('not shown');
        // Whole, inside the window.
        expect(box.x).toBeGreaterThanOrEqual(0);
        expect(box.y).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width).toBeLessThanOrEqual(480);
        expect(box.y + box.height).toBeLessThanOrEqual(800);
        expect(box.width).toBeGreaterThan(30);
        // Nothing on top of it: what is at its middle is the element itself.
        const onTop = await target.evaluate((element) => {
          const { x, y, width, height } = element.getBoundingClientRect();
          const hit = element.ownerDocument.elementFromPoint(x + width / 2, y + height / 2);
          return hit !== null && (hit === element || element.contains(hit));
        });
        expect(onTop).toBe(true);
      }
      // The page does not spill sideways, and the side panel is reached by scrolling down to it.
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(480);
      const panel = await page.locator('.panel').boundingBox();
      const composer = await page.locator('#composer').boundingBox();
      expect(panel?.y ?? 0).toBeGreaterThanOrEqual((composer?.y ?? 0) + (composer?.height ?? 0));
      // Typing and sending still work at this width: the message goes out and the bot answers.
      const messages = await page.locator('#feed > .msg').count();
      await page.locator('#message').fill('/invoice help');
      await page.getByRole('button', { name: 'Send' }).click();
      await expect
        .poll(() => page.locator('#feed > .msg').count(), { timeout: 10_000 })
        .toBeGreaterThan(messages + 1);
    } finally {
      await page.setViewportSize({ width: 1360, height: 1000 });
    }
  }, 60_000);

  it('loads nothing from anywhere but the demo itself', () => {
    const origin = new URL(demo.url).origin;
    expect(requested.length).toBeGreaterThan(0);
    expect(requested.filter((url) => new URL(url).origin !== origin)).toEqual([]);
  });

  it('stops, bot and all, on SIGTERM', async () => {
    demo.child.kill('SIGTERM');
    const [code] = (await once(demo.child, 'exit')) as [number | null];
    expect(code).toBe(0);
    expect(demo.output.filter((line) => /^bot (error|fatal)/.test(line))).toEqual([]);
  });
});

/** An invoice's payment link, as the side panel offers it to paste. */
async function paymentLink(id: string): Promise<string> {
  const panel = page.locator(`[data-invoice-card="${id}"]`);
  const link = await panel.getByRole('button', { name: 'Paste its link' }).getAttribute('data-fill');
  if (!link) throw new Error('no payment link in the side panel');
  return link;
}

describe('nothing configured, where production runs', () => {
  it.each([
    ['npm start with NODE_ENV=production', { npm_lifecycle_event: 'start', NODE_ENV: 'production' }],
    ['a bare node dist/main.js (a service, a container)', {}],
  ])('%s still stops at once, naming the settings it needs, and starts no demo', (_label, env) => {
    const run = spawnSync(process.execPath, [MAIN], {
      cwd: scratchDir(),
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('SLACK_BOT_TOKEN: is required');
    expect(run.stderr).toContain('PAYMENT_API_URL: is required');
    expect(`${run.stdout}${run.stderr}`).not.toContain('LOCAL DEMO');
  });
});
