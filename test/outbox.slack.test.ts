import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type DropReason, enqueue } from '../src/outbox.js';
import { SlackPostError } from '../src/slack/calls.js';
import { botPoster, type SlackPoster } from '../src/slack/poster.js';
import { openStore, type Store } from '../src/store/database.js';
import { ONE_WORKSPACE } from '../src/store/keys.js';
import { coinTrends, pointTimes } from '../src/views/charts.js';
import { digestMessage } from '../src/views/feed.js';
import { captureLogs } from './support/bolt.js';
import { outboxOf } from './support/jobs.js';
import { type SlackStandIn, startSlackStandIn } from './support/slack-stand-in.js';

/**
 * The outbox over the real poster and the Slack stand-in: Slack's answers as the Web API sends
 * them, read by the bot's own table of Slack's error codes, and message timestamps made by
 * Slack's clock, not the bot's.
 */

const TOKEN = 'xoxb-outbox-slack-test';
const paid = (text: string) => ({
  text,
  blocks: [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text } }],
});

let slack: SlackStandIn;
let store: Store;
let dir: string;
beforeAll(async () => {
  slack = await startSlackStandIn({ teamId: 'T0HOME', botToken: TOKEN });
  dir = mkdtempSync(join(tmpdir(), 'bot-outbox-slack-'));
  store = await openStore({ kind: 'sqlite', path: join(dir, 'bot.sqlite') });
});
afterAll(async () => {
  await slack.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => store.db.deleteFrom('outbox').execute());

/** The outbox with `poster` (the real one by default) and the bot's clock. */
function outboxWith(
  clock: () => number,
  poster: SlackPoster = botPoster(TOKEN, { slackApiUrl: slack.apiUrl }),
) {
  const dropped: DropReason[] = [];
  const outbox = outboxOf({
    store,
    posterOf: async () => poster,
    logger: captureLogs().logger,
    clock,
    owner: 'a',
    onDropped: (reason) => dropped.push(reason),
  });
  const runDue = async () => {
    const [row] = await outbox.claim(clock(), 1);
    return row ? outbox.run(row) : { outcome: 'nothing_due' };
  };
  return { runDue, dropped };
}
const put = (entry: Parameters<typeof enqueue>[1][number], now: number) =>
  store.transaction((trx) => enqueue(trx, [entry], now, ONE_WORKSPACE));
const card = (channel: string) =>
  botPoster(TOKEN, { slackApiUrl: slack.apiUrl }).post({ channel, ...paid('Open · Not paid') });

describe('Slack’s temporary answers only delay a message', () => {
  it.each([
    'rate_limited', // chat.postMessage's own "posted too many messages"
    'message_limit_exceeded',
    'internal_error',
    'service_unavailable',
    'org_login_required',
    'an_error_slack_does_not_document',
  ])('a “paid” reply Slack first answers %s arrives, once, on a later try', async (code) => {
    const channel = `C0REPLY-${code}`;
    const parent = await card(channel);
    const clock = { now: Date.now() };
    const { runDue, dropped } = outboxWith(() => clock.now);
    await put({ channel, threadTs: parent, message: paid('Paid') }, clock.now);
    slack.answerNext('chat.postMessage', { ok: false, error: code });
    expect(await runDue()).toEqual({ outcome: 'retry_later' });
    expect(slack.repliesIn(channel, parent)).toEqual([]);
    clock.now += 60_000;
    expect(await runDue()).toMatchObject({ outcome: expect.stringMatching(/^(sent|found)$/) });
    expect(slack.repliesIn(channel, parent).map((m) => m.text)).toEqual(['Paid']);
    expect(dropped).toEqual([]);
  });

  it.each(['update_failed', 'external_channel_migrating', 'streaming_state_conflict', 'team_added_to_org'])(
    'a card whose edit Slack first answers %s shows “Paid” after a later try',
    async (code) => {
      const channel = `C0CARD-${code}`;
      const ts = await card(channel);
      const clock = { now: Date.now() };
      const { runDue, dropped } = outboxWith(() => clock.now);
      await put({ channel, ts, message: paid('Paid') }, clock.now);
      slack.answerNext('chat.update', { ok: false, error: code });
      expect(await runDue()).toEqual({ outcome: 'retry_later' });
      clock.now += 60_000;
      expect(await runDue()).toEqual({ outcome: 'sent' });
      expect(slack.messages.find((m) => m.ts === ts)?.edits.map((e) => e.text)).toEqual(['Paid']);
      expect(dropped).toEqual([]);
    },
  );

  it.each([
    ['chat.postMessage', 'is_archived', 'not_in_channel'],
    ['chat.postMessage', 'invalid_blocks', 'refused'],
    ['chat.update', 'is_inactive', 'not_in_channel'],
    ['chat.update', 'edit_window_closed', 'refused'],
  ] as const)('%s answered %s is dropped at once (%s)', async (method, code, reason) => {
    const channel = `C0DROP-${method}-${code}`;
    const ts = await card(channel);
    const clock = { now: Date.now() };
    const { runDue, dropped } = outboxWith(() => clock.now);
    const edit = method === 'chat.update' ? { ts } : { threadTs: ts };
    await put({ channel, ...edit, message: paid('Paid') }, clock.now);
    slack.answerNext(method, { ok: false, error: code });
    expect(await runDue()).toEqual({ outcome: 'dropped' });
    expect(dropped).toEqual([reason]);
  });
});

describe('a workspace that refuses charts and tables', () => {
  /** A digest of twelve coins that all moved: two charts, and a table in the attachments. */
  const digest = () => {
    const now = Date.parse('2026-11-21T09:00:00Z');
    const coins = (n: number) =>
      Object.fromEntries(
        Array.from({ length: 12 }, (_, i) => [`C${i}`, { title: `Coin ${i}`, balance: `${n * i}` }]),
      );
    const times = pointTimes(now, 7);
    const trends = coinTrends(
      times,
      times.map((at, k) => ({ id: k, takenAt: at, balances: coins(k + 1) })),
    );
    return digestMessage({
      balances: coins(8),
      asOf: new Date(now),
      before: coins(7),
      beforeAt: new Date(now - 86_400_000),
      rises: 12,
      falls: 0,
      trends,
    });
  };

  it('gets the message again without them when Slack answers invalid_blocks, never nothing', async () => {
    const channel = 'C0NOCHARTS';
    const message = digest();
    expect(message.blocks.filter((b) => b.type === 'data_visualization')).toHaveLength(2);
    expect(message.attachments).toHaveLength(1);
    const clock = { now: Date.now() };
    const { runDue, dropped } = outboxWith(() => clock.now);
    await put({ channel, message }, clock.now);
    slack.answerNext('chat.postMessage', { ok: false, error: 'invalid_blocks' });
    expect(await runDue()).toEqual({ outcome: 'sent' });
    const [posted] = slack.repliesIn(channel);
    expect(posted?.text).toBe(message.text);
    expect(posted?.blocks).toEqual(message.blocks.filter((b) => b.type !== 'data_visualization'));
    expect(posted?.attachments).toBeUndefined();
    expect(
      slack.calls.filter((c) => c.method === 'chat.postMessage' && c.args.channel === channel),
    ).toHaveLength(2);
    expect(dropped).toEqual([]);
  });

  it('takes them as they are where Slack does', async () => {
    const channel = 'C0CHARTS';
    const message = digest();
    const clock = { now: Date.now() };
    const { runDue } = outboxWith(() => clock.now);
    await put({ channel, message }, clock.now);
    expect(await runDue()).toEqual({ outcome: 'sent' });
    const [posted] = slack.repliesIn(channel);
    expect(posted?.blocks).toEqual(message.blocks);
    expect(posted?.attachments).toEqual(message.attachments);
    expect(slack.problems).toEqual([]);
  });
});

describe('a post whose answer was lost, with the bot’s clock and Slack’s apart', () => {
  /** Slack's clock, which makes the stand-in's timestamps: held still, a whole second. */
  const SLACK_NOW = Date.parse('2026-11-21T08:00:00.000Z');
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each([
    ['2 s ahead of', 2000, 'in a channel'],
    ['2 s ahead of', 2000, 'in a thread'],
    ['2 s behind', -2000, 'in a channel'],
    ['2 s behind', -2000, 'in a thread'],
    ['4 minutes ahead of', 240_000, 'in a thread'],
    ['4 minutes behind', -240_000, 'in a channel'],
  ])(
    'is found when the bot’s clock runs %s Slack’s (%d ms), %s, and not posted again',
    async (_label, aheadMs, where) => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(SLACK_NOW);
      const channel = `C0CLOCK${aheadMs}-${where.length}`;
      const threadTs = where === 'in a thread' ? await card(channel) : undefined;
      const real = botPoster(TOKEN, { slackApiUrl: slack.apiUrl });
      let lose = true;
      // Slack takes the post; its answer never reaches the bot.
      const losing: SlackPoster = {
        ...real,
        async post(message) {
          const ts = await real.post(message);
          if (!lose) return ts;
          lose = false;
          throw new SlackPostError('transient', undefined);
        },
      };
      const { runDue } = outboxWith(() => Date.now() + aheadMs, losing);
      await put({ channel, threadTs, message: paid('Paid') }, Date.now() + aheadMs);
      expect(await runDue()).toEqual({ outcome: 'retry_later' });
      vi.setSystemTime(SLACK_NOW + 2000);
      expect(await runDue()).toEqual({ outcome: 'found' });
      expect(slack.repliesIn(channel, threadTs).map((m) => m.text)).toEqual(['Paid']);
    },
  );
});
