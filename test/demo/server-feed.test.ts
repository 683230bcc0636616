import { afterEach, describe, expect, it } from 'vitest';
import { type PageServer, startPageServer } from '../../src/demo/server.js';
import { BOT_USER, DEMO_USER, type DemoMessage, SLACKBOT } from '../../src/demo/workspace.js';
import { DEMO_INVOICE_IDS, demoInvoices } from '../../src/sandbox/data.js';
import { type Sandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/server.js';
import { type FakeSlack, fakeSlack, message, rawRequest } from '../support/demo-page-fakes.js';

/** What the demo page shows: the channel, the side panel and the suggestions, as the server renders them. */

let sandbox: Sandbox | undefined;
let page: PageServer | undefined;

afterEach(async () => {
  await page?.close();
  await sandbox?.close();
  page = undefined;
  sandbox = undefined;
});

async function start(
  options: SandboxOptions = {},
): Promise<{ slack: FakeSlack; page: PageServer; sandbox: Sandbox }> {
  sandbox = await startSandbox(options);
  const slack = fakeSlack();
  page = await startPageServer({ host: '127.0.0.1', port: 0, slack, sandbox });
  return { slack, page, sandbox };
}

const get = async (url: string, path: string) =>
  (await rawRequest(url, { path, host: new URL(url).host })).body;
const state = async (url: string) =>
  JSON.parse(await get(url, '/demo/state')) as { feed: string; panel: string; home: string | null };

/** The channel as the page shows it, with these messages in it. */
async function feedOf(...messages: DemoMessage[]): Promise<string> {
  const started = await start();
  started.slack.messages = messages;
  return (await state(started.page.url)).feed;
}

const TS = '1700000000.000100';
const TIME =
  '<time class="bk-date msg-time" data-ts="1700000000" data-format="{time}" datetime="2023-11-14T22:13:20.000Z"></time>';
const SHORTCUT = (ts: string) =>
  `<button type="button" class="shortcut" data-shortcut="${ts}" title="Message shortcut">⋮ Check payment status</button>`;

describe('the channel on the demo page', () => {
  it('says how to start when it is empty', async () => {
    expect(await feedOf()).toBe(
      '<p class="muted empty">Nothing here yet. Type <code>/balance</code> below.</p>',
    );
  });

  it('a message of yours: your name and avatar, its time, its text, and the message shortcut', async () => {
    expect(await feedOf(message({ ts: TS, user: DEMO_USER, text: 'hello' }))).toBe(
      `<article class="msg" data-ts="${TS}"><div class="avatar ">Y</div><div class="msg-body">` +
        `<div class="msg-meta"><span class="msg-name">you</span>${TIME}</div>` +
        `<div class="msg-content" data-place="message" data-ts="${TS}">hello</div>${SHORTCUT(TS)}</div></article>`,
    );
  });

  it('the bot’s, marked APP; Slackbot’s and a stranger’s, not', async () => {
    const feed = await feedOf(
      message({ ts: '1700000001.000001', user: BOT_USER, text: 'b' }),
      message({ ts: '1700000002.000001', user: SLACKBOT, text: 's' }),
      message({ ts: '1700000003.000001', user: 'U0STRANGER', text: 'x' }),
    );
    const articles = feed.split('</article>');
    expect(articles).toHaveLength(4);
    expect(articles[0]).toContain(
      '<div class="avatar bot">CP</div><div class="msg-body"><div class="msg-meta"><span class="msg-name">Crypto Payments</span><span class="app-tag">APP</span><time',
    );
    expect(articles[1]).toContain(
      '<div class="avatar slackbot">S</div><div class="msg-body"><div class="msg-meta"><span class="msg-name">Slackbot</span><time',
    );
    expect(articles[2]).toContain(
      '<div class="avatar ">?</div><div class="msg-body"><div class="msg-meta"><span class="msg-name">U0STRANGER</span><time',
    );
    expect(feed).not.toContain('undefined');
  });

  it('an edited reply only you see, and your command: marked so, with no shortcut', async () => {
    const feed = await feedOf(
      message({ ts: TS, user: BOT_USER, text: 'v2', edited: true, ephemeral: true }),
      message({ ts: '1700000005.000001', user: DEMO_USER, text: '/balance', ephemeral: true, command: true }),
    );
    expect(feed).toContain(
      `<article class="msg ephemeral" data-ts="${TS}"><div class="avatar bot">CP</div><div class="msg-body"><div class="msg-meta">` +
        `<span class="msg-name">Crypto Payments</span><span class="app-tag">APP</span>${TIME}` +
        '<span class="edited">(edited)</span><span class="only-you">Only visible to you</span></div>',
    );
    expect(feed).toContain('<article class="msg ephemeral command" data-ts="1700000005.000001">');
    expect(feed).not.toContain('class="shortcut"');
  });

  it('blocks rather than the text when a message has them, and each unfurled card under it', async () => {
    const section = (text: string) => ({ type: 'section', text: { type: 'mrkdwn', text } });
    const feed = await feedOf(
      message({
        ts: TS,
        user: BOT_USER,
        text: 'fallback',
        blocks: [section('from blocks')],
        unfurls: [
          { url: 'http://pay.example/pay/1', blocks: [section('card one')] },
          { url: 'http://pay.example/pay/2', blocks: [section('card two')] },
        ],
      }),
    );
    expect(feed).not.toContain('fallback');
    const card = (url: string, text: string) =>
      `<div class="unfurl" data-place="unfurl" data-ts="${TS}"><div class="unfurl-url">${url}</div>` +
      `<div class="bk"><div class="bk-section"><div class="bk-section-main"><div class="bk-text">${text}</div></div></div></div></div>`;
    expect(feed).toContain(
      `<div class="msg-content" data-place="message" data-ts="${TS}"><div class="bk"><div class="bk-section"><div class="bk-section-main"><div class="bk-text">from blocks</div></div></div></div></div>` +
        `${card('http://pay.example/pay/1', 'card one')}${card('http://pay.example/pay/2', 'card two')}${SHORTCUT(TS)}</div></article>`,
    );
  });

  it('each message once, in order, its replies under it; a reply whose parent is gone, on its own', async () => {
    const feed = await feedOf(
      message({ ts: '1700000001.000001', user: BOT_USER, text: 'first' }),
      message({ ts: '1700000002.000001', user: BOT_USER, text: 'second' }),
      message({ ts: '1700000003.000001', user: DEMO_USER, text: 'r1', threadTs: '1700000001.000001' }),
      message({ ts: '1700000004.000001', user: BOT_USER, text: 'r2', threadTs: '1700000001.000001' }),
      message({ ts: '1700000005.000001', user: BOT_USER, text: 'r3', threadTs: '1700000002.000001' }),
      message({ ts: '1700000006.000001', user: BOT_USER, text: 'orphan', threadTs: '1600000000.000001' }),
    );
    const shown = [...feed.matchAll(/data-place="message" data-ts="[^"]+">(\w+)</g)].map((m) => m[1]);
    expect(shown).toEqual(['first', 'r1', 'r2', 'second', 'r3', 'orphan']);
    expect([...feed.matchAll(/<div class="thread-count">([^<]*)<\/div>/g)].map((m) => m[1])).toEqual([
      '2 replies',
      '1 reply',
    ]);
    // The thread sits inside its parent, after the parent's shortcut; the orphan is a top-level message.
    expect(feed).toContain(
      `${SHORTCUT('1700000002.000001')}<div class="thread"><div class="thread-count">1 reply</div><article class="msg" data-ts="1700000005.000001">`,
    );
    expect(feed).toMatch(/<\/div><\/article><article class="msg" data-ts="1700000006\.000001">/);
    expect(feed).toMatch(/^<article class="msg" data-ts="1700000001\.000001">/);
    expect(feed.match(/class="thread"/g)).toHaveLength(2);
  });
});

describe('the side panel', () => {
  it('offers only the changes each invoice can still take, and a form per balance', async () => {
    const started = await start();
    const { panel } = await state(started.page.url);
    const cards = panel.split('<div class="invoice" ').slice(1);
    const changes = cards.map((c) => [...c.matchAll(/data-change="(\w+)"[^>]*>Mark/g)].map((m) => m[1]));
    // Paid once, and only while open and priced in a coin it accepts: the expired one, in USD, takes neither.
    expect(changes).toEqual([['paid', 'expired'], ['expired'], []]);
    expect(cards[0]).toContain(
      `<button type="button" data-invoice="${DEMO_INVOICE_IDS.open}" data-change="paid" title="The customer pays: 149.99 USDT-TRC20 arrives in the balance">Mark paid</button>\n` +
        `<button type="button" data-invoice="${DEMO_INVOICE_IDS.open}" data-change="expired">Mark expired</button>\n</div></div>`,
    );
    expect(cards[1]).toContain(
      `Paste its link</button>\n\n<button type="button" data-invoice="${DEMO_INVOICE_IDS.paid}"`,
    );
    expect(cards[2]).toContain('Paste its link</button>\n\n\n</div></div>');
    expect(panel).toContain('</div></div><div class="invoice" data-invoice-card=');
    expect(panel).not.toContain('Stryker');

    const forms = panel.match(/<form class="balance" data-balance="[^"]+">/g);
    expect(forms).toEqual(
      started.sandbox.balances.map((b) => `<form class="balance" data-balance="${b.id}">`),
    );
    expect(panel).toContain(
      '<form class="balance" data-balance="ETC">\n<label for="balance-ETC">Ethereum Classic <span class="muted">ETC</span></label>\n' +
        '<input id="balance-ETC" name="balance" value="12" inputmode="decimal" aria-label="ETC balance">\n' +
        '<button type="submit">Set</button>\n<span class="balance-error"></span>\n</form><form class="balance"',
    );
  });
});

describe('the suggestions under the message box', () => {
  const chips = async (url: string) =>
    [
      ...(await get(url, '/')).matchAll(
        /<button type="button" class="chip" data-fill="([^"]*)" title="[^"]*">([^<]*)</g,
      ),
    ].map((m) => [m[2], m[1]]);

  it('about the open invoice, wherever it is among the invoices', async () => {
    const started = await start({ invoices: (payUrl) => demoInvoices(payUrl).reverse() });
    const open = started.sandbox.current.find((i) => i.id === DEMO_INVOICE_IDS.open);
    expect(await chips(started.page.url)).toEqual([
      ['/balance', '/balance'],
      ['/invoice &lt;id&gt;', `/invoice ${DEMO_INVOICE_IDS.open}`],
      ['/invoice watch &lt;id&gt;', `/invoice watch ${DEMO_INVOICE_IDS.open}`],
      ['paste a payment link', `Could you check ${open?.link} please?`],
      ['/balance subscribe', '/balance subscribe'],
      ['/invoice watching', '/invoice watching'],
      ['/invoice help', '/invoice help'],
    ]);
  });

  it('about the first invoice when none is open, and about none when there are none', async () => {
    const closed = await start({ invoices: (payUrl) => demoInvoices(payUrl).slice(1) });
    expect((await chips(closed.page.url)).map(([, text]) => text)).toEqual([
      '/balance',
      `/invoice ${DEMO_INVOICE_IDS.paid}`,
      `/invoice watch ${DEMO_INVOICE_IDS.paid}`,
      `Could you check ${closed.sandbox.current[0]?.link} please?`,
      '/balance subscribe',
      '/invoice watching',
      '/invoice help',
    ]);
    await page?.close();
    await sandbox?.close();

    const none = await start({ invoices: () => [] });
    expect((await chips(none.page.url)).map(([label]) => label)).toEqual([
      '/balance',
      '/balance subscribe',
      '/invoice watching',
      '/invoice help',
    ]);
  });
});
