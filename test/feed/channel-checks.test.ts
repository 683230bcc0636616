import { beforeEach, describe, expect, it } from 'vitest';
import { TOKEN_PAUSE_MS } from '../../src/feed/channel.js';
import { DEFAULT_DIGEST } from '../../src/feed/schedule.js';
import { createMetrics } from '../../src/metrics.js';
import { enqueue, RETRY_FOR_MS } from '../../src/outbox.js';
import { num } from '../../src/sandbox/data.js';
import { SlackPostError } from '../../src/slack/calls.js';
import { failureOfCode } from '../../src/slack/error-codes.js';
import { ONE_WORKSPACE } from '../../src/store/keys.js';
import { visibleText } from '../support/block-kit.js';
import { HOME_TEAM } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { type RecordingPoster, recordingPoster } from '../support/fake-slack.js';
import { useSandbox } from '../support/use-sandbox.js';
import { feedInstance, type InstanceOptions } from './feed-instance.js';

/**
 * What `conversations.info` says just before a feed message goes out: only a channel gone,
 * archived or closed to the bot (or shared since) ends the feed; Slack refusing for now, or
 * refusing the bot's token, holds the message until it answers.
 */

const env = useSandbox();
const FINANCE = 'G0FINANCE';
const MINUTE = 60_000;
const T0 = Date.parse('2026-11-21T08:00:00Z');

let clock: { now: number };
let poster: RecordingPoster;
/** While set, conversations.info is refused with this error. */
let refusal: string | undefined;
beforeEach(async () => {
  clock = { now: T0 };
  refusal = undefined;
  poster = recordingPoster();
  poster.conversations.set(FINANCE, { isPrivate: true, isDirect: false, isShared: false });
  const conversation = poster.conversation;
  poster.conversation = async (channel) => {
    // A channel closed to the bot is classed as the poster classes it (Slack's method page:
    // channel_is_limited_access is one); any other refusal reaches the feed as 'refused'.
    if (refusal !== undefined) {
      const closed = failureOfCode('conversations.info', refusal) === 'not_in_channel';
      throw new SlackPostError(closed ? 'not_in_channel' : 'refused', refusal);
    }
    return conversation(channel);
  };
  await emptyWork(env.store);
  env.sandbox.reset();
  env.sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num('0.0012') }]);
});

async function subscribed(opts: InstanceOptions = {}) {
  const bot = feedInstance(env, 'a', poster, clock, {}, opts);
  await bot.feed.subscribe({
    teamId: HOME_TEAM,
    channelId: FINANCE,
    userId: 'U0FIN',
    digest: DEFAULT_DIGEST,
  });
  return bot;
}
/** A payment arrives, and the next reading sees it: its message waits in the outbox. */
async function payment(tick: () => Promise<unknown>, balance = '1.0012') {
  env.sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num(balance) }]);
  clock.now += MINUTE;
  await tick();
}
const feedPosts = () =>
  poster
    .repliesIn(FINANCE)
    .slice(1)
    .map((m) => m.text);
const toSubscriber = () => poster.repliesIn('U0FIN').map((m) => visibleText(m));

describe('a refusal of conversations.info that says nothing about the channel', () => {
  it.each(['org_login_required', 'token_expired', 'invalid_auth', 'missing_scope'])(
    'keeps the feed (%s): the payment is posted once Slack answers again',
    async (code) => {
      const { feed, tick } = await subscribed();
      refusal = code;
      await payment(tick);
      expect(feedPosts()).toEqual([]);
      expect(await feed.list(HOME_TEAM)).toHaveLength(1);
      refusal = undefined;
      clock.now += TOKEN_PAUSE_MS;
      await tick();
      expect(feedPosts()).toEqual(['Received: +1 BTC']);
      expect(toSubscriber()).toEqual([]);
    },
  );

  it('tries again within seconds when Slack is only busy (a migration), as after a time-out', async () => {
    const { tick } = await subscribed();
    refusal = 'org_login_required';
    await payment(tick);
    refusal = undefined;
    clock.now += 2000;
    await tick();
    expect(feedPosts()).toEqual(['Received: +1 BTC']);
  });

  it('pauses on token trouble for up to a message’s life: what is younger goes out once Slack answers, in order', async () => {
    const { feed, tick, logs } = await subscribed();
    refusal = 'token_expired';
    await payment(tick);
    clock.now += RETRY_FOR_MS - MINUTE;
    await payment(tick, '3.0012');
    await payment(tick, '6.0012');
    expect(feedPosts()).toEqual([]);
    expect(logs.lines.map((l) => l.msg)).toContain(
      'payments feed paused: Slack refuses the bot’s token; its messages wait',
    );
    refusal = undefined;
    clock.now += TOKEN_PAUSE_MS;
    await tick();
    expect(feedPosts()).toEqual(['Received: +2 BTC', 'Received: +3 BTC']);
    expect(await feed.list(HOME_TEAM)).toHaveLength(1);
  });

  it('holds no watch’s "Paid" behind a paused feed message, and drops that one after RETRY_FOR_MS, counted', async () => {
    const metrics = createMetrics();
    const { tick } = await subscribed({ onDropped: (reason) => metrics.outboxDropped(reason) });
    refusal = 'missing_scope';
    await payment(tick);
    // A watch in the same channel is told its invoice was paid, after the feed message paused.
    const section = (text: string) => [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text } }];
    const card = await poster.post({ channel: FINANCE, text: 'Watched', blocks: section('Watched') });
    const paid = { text: 'Paid', blocks: section('Paid') };
    await env.store.transaction((trx) =>
      enqueue(
        trx,
        [{ channel: FINANCE, threadTs: card, message: paid, watchId: 'w-1' }],
        clock.now,
        ONE_WORKSPACE,
      ),
    );
    await tick();
    expect(poster.repliesIn(FINANCE, card).map((m) => m.text)).toEqual(['Paid']);
    // 25 hours on, Slack still refusing the token: the feed message is dropped, not kept for ever.
    for (let hour = 1; hour <= 25; hour += 1) {
      clock.now += 60 * MINUTE;
      await tick();
    }
    expect(feedPosts()).toEqual(['Watched']); // the card only: the payment was never posted
    const results = await env.store.db
      .selectFrom('outbox')
      .select(['message', 'result'])
      .where('subscription_id', 'is not', null)
      .orderBy('id')
      .execute();
    // The payment and yesterday's digest dropped a day after they were decided; today's digest waits.
    expect(results.map((r) => [JSON.parse(r.message).text.slice(0, 20), r.result])).toEqual([
      ['Received: +1 BTC', 'dropped: missing_scope'],
      ['Daily balance digest', 'dropped: missing_scope'],
      ['Daily balance digest', null],
    ]);
    expect(await metrics.registry.getSingleMetricAsString('slackbot_outbox_dropped_total')).toContain(
      'slackbot_outbox_dropped_total{reason="gave_up"} 2',
    );
  });
});

describe('an answer that the bot can no longer see the channel', () => {
  it.each(['channel_not_found', 'not_in_channel', 'is_archived', 'channel_is_limited_access'])(
    'ends the feed (%s), and tells the subscriber',
    async (code) => {
      const { feed, tick } = await subscribed();
      refusal = code;
      await payment(tick);
      expect(feedPosts()).toEqual([]);
      expect(await feed.list(HOME_TEAM)).toEqual([]);
      refusal = undefined;
      await tick();
      expect(toSubscriber()).toEqual([
        ':warning: The payments feed in <#G0FINANCE> has stopped: the bot can no longer see the channel. Subscribe again in a private channel of this workspace if you still want it.',
      ]);
    },
  );
});

describe('turning a feed on where Slack will not describe the channel', () => {
  it('is an error, not "invite me first", when Slack refuses the bot’s token', async () => {
    const { feed } = feedInstance(env, 'a', poster, clock);
    refusal = 'missing_scope';
    await expect(
      feed.subscribe({ teamId: HOME_TEAM, channelId: FINANCE, userId: 'U0FIN', digest: DEFAULT_DIGEST }),
    ).rejects.toMatchObject({ slackError: 'missing_scope' });
    expect(await feed.list(HOME_TEAM)).toEqual([]);
    expect(poster.messages).toEqual([]);
  });
});
