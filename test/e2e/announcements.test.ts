import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { openStore } from '../../src/store/database.js';
import { assembledBot } from '../support/assembled-bot.js';
import { visibleText } from '../support/block-kit.js';
import { captureLogs } from '../support/bolt.js';
import { commandBody, postToBot } from '../support/slack-requests.js';
import { startSlackStandIn } from '../support/slack-stand-in.js';
import { askBot, HOME_TEAM, SECRETS, type Stack, startStack, until } from './harness.js';

/**
 * The bot's own announcements over the wire: the Slack stand-in refusing in the ways Slack does
 * (a 429 or a 5xx on a thread reply, history closed in a public channel the bot has not joined,
 * an outage of hours), and each announcement arriving once, in order, all the same.
 */

const OPEN = DEMO_INVOICE_IDS.open;
/** A part payment: the invoice still awaits the rest, so its watch goes on. */
const PART_LINE = '*Payment*: Not paid → Partially paid';
const PAID_LINE = '*Payment*: Partially paid → Paid';
const ENDED_NOTE = 'No longer watching *Order #1042 — annual support plan*: it no longer awaits payment';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a watch in a public channel the bot has not joined (chat:write.public)', () => {
  let stack: Stack;
  const watching = async (text: string) => {
    const body = (response_url: string) =>
      commandBody({ command: '/invoice', text, response_url, channel_id: 'C0PUBLIC', user_id: 'U0WATCHER' });
    return visibleText((await askBot(stack.bot, stack.slack, body)).reply);
  };

  it.each([
    ['a 429', (s: Stack) => s.slack.rateLimitNext('chat.postMessage', 1)],
    ['a 503', (s: Stack) => s.slack.answerNext('chat.postMessage', { ok: false }, { status: 503 })],
  ])(
    'after %s on the "partially paid" reply, the thread gets it once and the watch goes on',
    async (_what, refuse) => {
      stack = await startStack({ env: { WATCH_POLL_SECONDS: '1' } });
      cleanups.push(() => stack.close());
      const { slack, sandbox } = stack;
      slack.conversations.set('C0PUBLIC', { id: 'C0PUBLIC', is_member: false });
      expect(await watching(`watch ${OPEN}`)).toContain('Watching *Order #1042');
      const [card] = slack.repliesIn('C0PUBLIC');
      if (!card) throw new Error('no live card');

      refuse(stack);
      sandbox.updateInvoice(OPEN, { payStatus: 'partially_paid' });
      await until(() => slack.repliesIn('C0PUBLIC', card.ts).length > 0, 'the "partially paid" reply');
      await new Promise((r) => setTimeout(r, 2500));
      const replies = slack.repliesIn('C0PUBLIC', card.ts);
      expect(replies.map((m) => visibleText(m))).toEqual([expect.stringContaining(PART_LINE)]);
      expect(
        slack.calls.filter((c) => c.method === 'chat.postMessage' && c.args.thread_ts === card.ts),
      ).toHaveLength(2);
      expect(await watching('watching')).toContain('Order #1042');
      expect(slack.problems).toEqual([]);
    },
  );

  it('looks for an earlier attempt first where it may, and posts again where Slack says not_in_channel', async () => {
    stack = await startStack({ env: { WATCH_POLL_SECONDS: '1' } });
    cleanups.push(() => stack.close());
    const { slack, sandbox } = stack;
    slack.conversations.set('C0PUBLIC', { id: 'C0PUBLIC', is_member: false });
    await watching(`watch ${OPEN}`);
    const [card] = slack.repliesIn('C0PUBLIC');
    if (!card) throw new Error('no live card');
    slack.answerNext('chat.postMessage', { ok: false }, { status: 503 });
    sandbox.updateInvoice(OPEN, { payStatus: 'paid' });
    await until(() => slack.repliesIn('C0PUBLIC', card.ts).length > 0, 'the "paid" reply');
    const looked = slack.calls.filter((c) => c.method === 'conversations.replies');
    expect(looked.map((c) => c.args.channel)).toEqual(['C0PUBLIC']);
    const warning = () =>
      stack.bot.logs().find((l) => l.msg === 'could not look for an earlier attempt; posting again');
    await expect.poll(warning).toMatchObject({ channel: 'C0PUBLIC', err: { slackError: 'not_in_channel' } });
  });
});

describe('a two-hour Slack outage, on the bot’s own clock', () => {
  it('loses nothing: /metrics shows the backlog, and once Slack answers the thread gets each change once, in order', async () => {
    const sandbox = await startSandbox();
    const slack = await startSlackStandIn({ teamId: HOME_TEAM, botToken: SECRETS.botToken });
    const dir = mkdtempSync(join(tmpdir(), 'bot-outage-'));
    const store = await openStore({ kind: 'sqlite', path: join(dir, 'bot.sqlite') });
    const pool = new Pool(sandbox.url);
    cleanups.push(async () => {
      await pool.close();
      await store.close();
      await Promise.all([sandbox.close(), slack.close()]);
      rmSync(dir, { recursive: true, force: true });
    });

    // The bot as main.ts assembles it, in this process, so its clock can be moved by hours.
    const clock = { now: Date.now() };
    const config = loadConfig({
      SLACK_BOT_TOKEN: SECRETS.botToken,
      SLACK_SIGNING_SECRET: SECRETS.signingSecret,
      SLACK_API_URL: slack.apiUrl,
      PAYMENT_API_URL: sandbox.url,
      PAYMENT_API_KEY: sandbox.apiKey,
      PORT: '0',
      HOST: '127.0.0.1',
      WATCH_POLL_SECONDS: '1',
    });
    const { logger } = captureLogs();
    const bot = await assembledBot({ config, store, logger, dispatcher: pool, clock: () => clock.now });
    const { port } = await bot.start();
    cleanups.push(async () => void (await bot.stop(1000)));
    const scrape = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();

    sandbox.updateInvoice(OPEN, { timeout: '2099-01-01T00:00:00.000Z' });
    await postToBot(
      `http://127.0.0.1:${port}/slack/events`,
      commandBody({
        command: '/invoice',
        text: `watch ${OPEN}`,
        response_url: slack.responseUrl(),
        user_id: 'U0WATCHER',
      }),
      SECRETS.signingSecret,
    );
    await until(() => slack.repliesIn('C0SUPPORT').length === 1, 'the live card');
    const [card] = slack.repliesIn('C0SUPPORT');
    if (!card) throw new Error('no live card');

    /** Failed tries the store has recorded: the clock moves on only once the last one is. */
    const tries = async () => {
      const { n } = await store.db
        .selectFrom('outbox')
        .select((eb) => eb.fn.sum<number>('attempts').as('n'))
        .executeTakeFirstOrThrow();
      return Number(n ?? 0);
    };
    const triesAfter = async (before: number, what: string) => {
      const started = Date.now();
      while ((await tries()) <= before) {
        if (Date.now() - started > 15_000) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };

    // Slack goes down; the customer pays part, and an hour later the rest, which ends the watch.
    slack.outage(503);
    sandbox.updateInvoice(OPEN, { payStatus: 'partially_paid' });
    clock.now += 31_000;
    await triesAfter(0, 'a first try');
    const oldestAt = clock.now;
    for (let minutes = 10; minutes <= 120; minutes += 10) {
      if (minutes === 60) sandbox.updateInvoice(OPEN, { payStatus: 'paid' });
      const before = await tries();
      clock.now += 10 * 60_000;
      await triesAfter(before, `a try ${minutes} minutes into the outage`);
    }
    expect(await tries()).toBeGreaterThan(12);
    expect(slack.calls.filter((c) => c.method === 'chat.update').length).toBeGreaterThan(12);
    const during = await scrape();
    // Two card edits (part paid; paid and no longer watched), two thread replies (part paid; paid and the end).
    expect(during).toMatch(/^slackbot_outbox_backlog 4$/m);
    const oldest = Number(/^slackbot_outbox_oldest_seconds (\S+)$/m.exec(during)?.[1]);
    expect(oldest).toBe((clock.now - oldestAt) / 1000);
    expect(oldest).toBeGreaterThanOrEqual(2 * 3600);
    expect(slack.repliesIn('C0SUPPORT', card.ts)).toEqual([]);

    slack.outage(undefined);
    clock.now += 5 * 60_000;
    await until(() => slack.repliesIn('C0SUPPORT', card.ts).length === 2, 'both replies');
    await new Promise((r) => setTimeout(r, 2000));
    expect(slack.repliesIn('C0SUPPORT', card.ts).map((m) => visibleText(m))).toEqual([
      expect.stringContaining(PART_LINE),
      expect.stringContaining(`${PAID_LINE}\n${ENDED_NOTE}`),
    ]);
    expect(card.edits).toHaveLength(2);
    expect(visibleText(card.edits[0])).toContain('*Payment*\nPartially paid');
    expect(visibleText(card.edits.at(-1))).toContain('*Payment*\nPaid');
    expect(visibleText(card.edits.at(-1))).toContain('No longer watched since');
    const after = await scrape();
    expect(after).toMatch(/^slackbot_outbox_backlog 0$/m);
    expect(after).not.toContain('slackbot_outbox_dropped_total{');
    expect(slack.problems).toEqual([]);
  }, 90_000);
});
