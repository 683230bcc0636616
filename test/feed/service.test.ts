import { beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_DIGEST } from '../../src/feed/schedule.js';
import type { createFeed, SubscribeRequest } from '../../src/feed/service.js';
import type { PaymentsClient } from '../../src/payments/index.js';
import { num } from '../../src/sandbox/data.js';
import { KEY_PROBE_MS } from '../../src/service-state.js';
import { SlackPostError } from '../../src/slack/calls.js';
import { visibleText } from '../support/block-kit.js';
import { HOME_TEAM } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { type RecordingPoster, recordingPoster } from '../support/fake-slack.js';
import { feedJobsOf } from '../support/jobs.js';
import { useSandbox } from '../support/use-sandbox.js';
import { feedInstance, type InstanceOptions } from './feed-instance.js';

const env = useSandbox();
const FINANCE = 'G0FINANCE';
const MINUTE = 60_000;
const T0 = Date.parse('2026-11-21T08:00:00Z');

const instance = (
  name: string,
  poster: RecordingPoster,
  clock: { now: number },
  policy = {},
  opts: InstanceOptions = {},
) => feedInstance(env, name, poster, clock, policy, opts);

let clock: { now: number };
let poster: RecordingPoster;
beforeEach(async () => {
  clock = { now: T0 };
  poster = recordingPoster();
  poster.conversations.set(FINANCE, { isPrivate: true, isDirect: false, isShared: false });
  await emptyWork(env.store);
  env.sandbox.reset();
  env.sandbox.setBalances([
    { id: 'BTC', title: 'Bitcoin', balance: num('0.0012') },
    { id: 'USDT-TRC20', title: 'Tether <TRC-20>', balance: num('1.5') },
  ]);
});

const request = (overrides: Partial<SubscribeRequest> = {}): SubscribeRequest => ({
  teamId: HOME_TEAM,
  channelId: FINANCE,
  userId: 'U0FINANCE',
  digest: DEFAULT_DIGEST,
  ...overrides,
});
const feedPosts = (channel = FINANCE) => poster.repliesIn(channel).slice(1); // after the confirmation

describe('subscribing', () => {
  it('confirms in the channel, with the current balance as the baseline', async () => {
    const { feed } = instance('a', poster, clock);
    expect(await feed.subscribe(request())).toEqual({ kind: 'subscribed', digest: '09:00 UTC' });
    const [confirmation] = poster.repliesIn(FINANCE);
    expect(visibleText(confirmation)).toContain(
      '<@U0FINANCE> turned on the payments feed in <#G0FINANCE>: every 1 minute',
    );
    expect(visibleText(confirmation)).toContain('*Bitcoin*\n0.0012 BTC');
    expect(visibleText(confirmation)).toContain('*Tether &lt;TRC-20&gt;*\n1.5 USDT-TRC20');
    expect(poster.problems).toEqual([]);
  });

  it.each([
    ['a direct message', { isPrivate: true, isDirect: true, isShared: false }, 'direct_message'],
    [
      'a channel shared with another organisation',
      { isPrivate: true, isDirect: false, isShared: true },
      'shared_channel',
    ],
    ['a public channel', { isPrivate: false, isDirect: false, isShared: false }, 'public_channel'],
  ])('refuses %s, posting nothing', async (_label, facts, refusal) => {
    poster.conversations.set('C0X', facts);
    const { feed } = instance('a', poster, clock);
    expect(await feed.subscribe(request({ channelId: 'C0X' }))).toEqual({ kind: 'refused', refusal });
    expect(poster.messages).toEqual([]);
    expect(env.sandbox.requests).toHaveLength(0);
  });

  it('takes a public channel the admin listed in BALANCE_ALLOWED_CHANNELS', async () => {
    poster.conversations.set('C0LISTED', { isPrivate: false, isDirect: false, isShared: false });
    const { feed } = instance('a', poster, clock, { allowedChannels: ['C0LISTED'] });
    expect(await feed.subscribe(request({ channelId: 'C0LISTED' }))).toMatchObject({ kind: 'subscribed' });
  });

  it('asks to be invited where the bot cannot see or post', async () => {
    const { feed } = instance('a', poster, clock);
    expect(await feed.subscribe(request({ channelId: 'G0UNKNOWN' }))).toEqual({ kind: 'not_in_channel' });
    poster.conversations.set('G0CLOSED', { isPrivate: true, isDirect: false, isShared: false });
    poster.closedChannels.add('G0CLOSED');
    expect(await feed.subscribe(request({ channelId: 'G0CLOSED' }))).toEqual({ kind: 'not_in_channel' });
    // Nothing was said there, so no feed started: once the bot is invited, it can be turned on.
    expect(await feed.list(HOME_TEAM)).toEqual([]);
    poster.closedChannels.delete('G0CLOSED');
    expect(await feed.subscribe(request({ channelId: 'G0CLOSED' }))).toMatchObject({ kind: 'subscribed' });
  });

  it('turns the feed on once when two people ask at the same moment: one message, the other told it is on', async () => {
    const { feed } = instance('a', poster, clock);
    const [one, two] = await Promise.all([
      feed.subscribe(request()),
      feed.subscribe(request({ userId: 'U0OTHER', digest: { hour: 18, minute: 0, zone: 'UTC' } })),
    ]);
    expect([one?.kind, two?.kind].sort()).toEqual(['already', 'subscribed']);
    expect(poster.repliesIn(FINANCE)).toHaveLength(1);
    expect(await feed.list(HOME_TEAM)).toHaveLength(1);
  });

  it('starts no feed when Slack does not answer about the channel, and one once it does', async () => {
    const { feed } = instance('a', poster, clock);
    poster.failNext(new SlackPostError('transient', undefined));
    await expect(feed.subscribe(request())).rejects.toBeInstanceOf(SlackPostError);
    expect(await feed.list(HOME_TEAM)).toEqual([]);
    expect(await feed.subscribe(request())).toMatchObject({ kind: 'subscribed' });
  });

  it('keeps one feed per channel; unsubscribing says so in the channel', async () => {
    const { feed, tick } = instance('a', poster, clock);
    await feed.subscribe(request());
    expect(await feed.subscribe(request())).toMatchObject({ kind: 'already', digest: '09:00 UTC' });
    expect(await feed.list(HOME_TEAM)).toEqual([
      { channelId: FINANCE, subscriberId: 'U0FINANCE', digest: '09:00 UTC', since: new Date(T0) },
    ]);
    expect(await feed.unsubscribe(request({ userId: 'U0OTHER' }))).toEqual({ kind: 'unsubscribed' });
    expect(await feed.unsubscribe(request())).toEqual({ kind: 'not_subscribed' });
    await tick();
    expect(visibleText(feedPosts()[0])).toBe('<@U0OTHER> turned off the payments feed in this channel.');
    expect(await feed.list(HOME_TEAM)).toEqual([]);
  });
});

describe('the feed', () => {
  it('reads the balance once per interval for every channel, and posts what moved, exactly', async () => {
    poster.conversations.set('G0OTHER', { isPrivate: true, isDirect: false, isShared: false });
    const { feed, tick } = instance('a', poster, clock);
    await feed.subscribe(request());
    await feed.subscribe(request({ channelId: 'G0OTHER' }));
    env.sandbox.requests.length = 0;
    clock.now += MINUTE;
    expect((await tick()).map((r) => r.outcome)).toEqual(['unchanged']);
    env.sandbox.setBalances([
      { id: 'USDT-TRC20', title: 'Tether <TRC-20>', balance: num('0') },
      { id: 'BTC', title: 'Bitcoin', balance: num('0.0054') },
      { id: 'DOGE', title: 'Dogecoin', balance: num('42') },
    ]);
    clock.now += MINUTE;
    expect((await tick()).map((r) => r.outcome)).toEqual(['changed', 'sent', 'sent']);
    expect(env.sandbox.requests).toHaveLength(2);
    for (const channel of [FINANCE, 'G0OTHER']) {
      const [post] = feedPosts(channel);
      expect(visibleText(post)).toBe(
        [
          '*Tether &lt;TRC-20&gt;*: *−1.5* USDT-TRC20 withdrawn or moved — balance 0 USDT-TRC20',
          '*Bitcoin*: received *+0.0042* BTC — balance 0.0054 BTC',
          '*Dogecoin*: received *+42* DOGE — balance 42 DOGE',
          ':moneybag: Payments feed · read <!date^1795248120^{date_short_pretty} at {time}|2026-11-21T08:02:00Z>',
        ].join('\n'),
      );
      expect(post?.text).toBe('Balance changed in 3 currencies');
    }
    expect(poster.problems).toEqual([]);
  });

  it('does not post again after a restart, and posts a change made while it was down once', async () => {
    await instance('a', poster, clock).feed.subscribe(request());
    env.sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num('1') }]);
    clock.now += 10 * MINUTE;
    const b = instance('b', poster, clock);
    await b.tick();
    clock.now += MINUTE;
    await b.tick();
    expect(feedPosts()).toHaveLength(1);
    expect(feedPosts()[0]?.text).toBe('Balance changed in 2 currencies');
  });

  it('lets one instance read per interval however many run', async () => {
    const a = instance('a', poster, clock);
    const b = instance('b', poster, clock);
    await a.feed.subscribe(request());
    env.sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num('2') }]);
    env.sandbox.requests.length = 0;
    clock.now += MINUTE;
    await Promise.all([a.tick(), b.tick()]);
    expect(env.sandbox.requests).toHaveLength(1);
    expect(feedPosts()).toHaveLength(1);
  });

  it('retries a failing service quietly', async () => {
    const { feed, tick } = instance('a', poster, clock);
    await feed.subscribe(request());
    env.sandbox.failNext({ kind: 'status', status: 503 }, 10);
    clock.now += MINUTE;
    expect((await tick()).map((r) => r.outcome)).toEqual(['service_unavailable']);
    expect(feedPosts()).toEqual([]);
  });

  it('says once in each feed channel that the key is rejected, not every minute, and again after it worked', async () => {
    const { feed, tick } = instance('a', poster, clock);
    await feed.subscribe(request());
    const unauthorized = { kind: 'status' as const, status: 401, body: '{}' };
    env.sandbox.failNext(unauthorized, 3);
    for (let i = 0; i < 3; i += 1) {
      clock.now += MINUTE;
      await tick();
    }
    expect(feedPosts().map((p) => p.text)).toEqual([expect.stringContaining('rejects the bot’s API key')]);
    clock.now += MINUTE;
    await tick();
    env.sandbox.failNext(unauthorized, 1);
    clock.now += MINUTE;
    await tick();
    expect(feedPosts()).toHaveLength(2);
  });

  it('stops at a channel shared with another organisation since, and tells the subscriber privately', async () => {
    const { feed, tick, logs } = instance('a', poster, clock);
    await feed.subscribe(request());
    poster.conversations.set(FINANCE, { isPrivate: true, isDirect: false, isShared: true });
    env.sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num('9') }]);
    clock.now += MINUTE;
    await tick();
    expect(feedPosts()).toEqual([]);
    expect(visibleText(poster.repliesIn('U0FINANCE')[0])).toBe(
      ':warning: The payments feed in <#G0FINANCE> has stopped: the channel is now shared with another organisation. Subscribe again in a private channel of this workspace if you still want it.',
    );
    expect(await feed.list(HOME_TEAM)).toEqual([]);
    expect(logs.lines.map((l) => l.msg)).toContain(
      'payments feed stopped: the channel may no longer receive it',
    );
  });

  it('tells the subscriber though the notice’s first try timed out: a DM by user id cannot be searched, so it is posted again', async () => {
    const { feed, tick } = instance('a', poster, clock);
    await feed.subscribe(request());
    poster.conversations.set(FINANCE, { isPrivate: true, isDirect: false, isShared: true });
    const post = poster.post;
    let timedOut = false;
    poster.post = async (message) => {
      if (message.channel !== 'U0FINANCE' || timedOut) return post(message);
      timedOut = true;
      throw new SlackPostError('transient', undefined);
    };
    // As conversations.history answers for a user id: it is not a conversation the bot can read.
    poster.find = async () => {
      throw new SlackPostError('not_in_channel', 'channel_not_found');
    };
    env.sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num('9') }]);
    clock.now += MINUTE;
    await tick();
    expect(timedOut).toBe(true);
    expect(poster.repliesIn('U0FINANCE')).toEqual([]);
    clock.now += 2000;
    await tick();
    expect(poster.repliesIn('U0FINANCE').map((m) => m.text)).toEqual([
      expect.stringContaining('The payments feed in <#G0FINANCE> has stopped'),
    ]);
  });
});

describe('the digest', () => {
  it('goes out once a day at the local time, with 24-hour changes and the feed’s counts', async () => {
    const { feed, tick } = instance('a', poster, clock);
    await feed.subscribe(request({ digest: { hour: 9, minute: 30, zone: 'Europe/Berlin' } }));
    env.sandbox.setBalances([
      { id: 'BTC', title: 'Bitcoin', balance: num('0.0020') },
      { id: 'USDT-TRC20', title: 'Tether <TRC-20>', balance: num('1') },
    ]);
    clock.now += MINUTE;
    await tick();
    // 09:30 in Berlin is 08:30 UTC in November.
    clock.now = Date.parse('2026-11-21T08:29:59Z');
    expect(poster.repliesIn(FINANCE).filter((p) => p.text.startsWith('Daily'))).toEqual([]);
    await tick();
    clock.now = Date.parse('2026-11-21T08:30:00Z');
    await tick();
    const digests = poster.repliesIn(FINANCE).filter((p) => p.text.startsWith('Daily'));
    expect(digests).toHaveLength(1);
    expect(digests[0]?.text).toBe(
      'Daily balance digest: The feed saw 1 rise and 1 fall in the last 24 hours.',
    );
    expect(visibleText(digests[0])).toContain('*Bitcoin*\n0.0020 BTC · +0.0008 in 24 h');
    expect(visibleText(digests[0])).toContain('1 USDT-TRC20 · −0.5 in 24 h');
    expect(visibleText(digests[0])).toContain('changes since');
    clock.now += 60 * MINUTE;
    await tick();
    expect(poster.repliesIn(FINANCE).filter((p) => p.text.startsWith('Daily'))).toHaveLength(1);
  });

  it('is sent once, marked late, when the bot was down at its time for less than 12 hours', async () => {
    const { feed } = instance('a', poster, clock);
    await feed.subscribe(request());
    clock.now = Date.parse('2026-11-21T20:59:00Z'); // 11 h 59 min after 09:00 UTC
    const b = instance('b', poster, clock);
    await b.tick();
    await b.tick();
    const digests = poster.repliesIn(FINANCE).filter((p) => p.text.startsWith('Daily'));
    expect(digests.map((d) => d.text)).toEqual([
      'Daily balance digest (late): The feed saw 0 rises and 0 falls in the last 24 hours.',
    ]);
    expect(visibleText(digests[0])).toContain('sent 719 min late: the bot was not running at digest time');
  });

  it('is skipped, never sent twice, when it is 12 hours late or more', async () => {
    const { feed } = instance('a', poster, clock);
    await feed.subscribe(request());
    clock.now = Date.parse('2026-11-21T21:00:00Z');
    const b = instance('b', poster, clock);
    await b.tick();
    expect(poster.repliesIn(FINANCE).filter((p) => p.text.startsWith('Daily'))).toEqual([]);
    expect(b.logs.lines.map((l) => l.msg)).toContain('a digest more than 12 hours late was skipped');
    clock.now = Date.parse('2026-11-22T09:00:00Z');
    await b.tick();
    expect(poster.repliesIn(FINANCE).filter((p) => p.text.startsWith('Daily'))).toHaveLength(1);
  });
});

const pollRow = () =>
  env.store.db
    .selectFrom('singletons')
    .selectAll()
    .where('name', '=', 'balance_poll')
    .executeTakeFirstOrThrow();
const readings = async () => (await env.store.db.selectFrom('balance_history').select('id').execute()).length;
const subscription = (channel = FINANCE) =>
  env.store.db
    .selectFrom('feed_subscriptions')
    .selectAll()
    .where('channel_id', '=', channel)
    .executeTakeFirstOrThrow();
const digestsIn = (channel = FINANCE) => poster.repliesIn(channel).filter((p) => p.text.startsWith('Daily'));

describe('the poll, in detail', () => {
  it('is due one interval after the last reading, and claimed by one instance only', async () => {
    const { feed, deps } = instance('a', poster, clock, {}, { pollSeconds: 120 });
    const job = feedJobsOf(deps, feed).poll;
    expect([job.name, feedJobsOf(deps, feed).digest.name]).toEqual(['feed_poll', 'feed_digest']);
    await feed.subscribe(request());
    expect(await job.nextDueAt?.(clock.now)).toBe(T0 + 120_000);
    expect(await job.claim(T0 + 119_999, 1)).toEqual([]);
    const [row] = await job.claim(T0 + 120_000, 1);
    expect(row && job.dueAt(row)).toBe(T0 + 120_000);
    expect(await job.claim(T0 + 120_000, 1)).toEqual([]);
    clock.now = T0 + 120_000;
    if (row) await job.run(row);
    expect(await pollRow()).toMatchObject({
      next_run_at: T0 + 240_000,
      last_success_at: T0 + 120_000,
      lease_owner: null,
    });
  });

  it('reads nothing while no channel subscribes', async () => {
    const { feed, deps } = instance('a', poster, clock);
    await feed.subscribe(request());
    await feed.unsubscribe(request());
    expect(await feedJobsOf(deps, feed).poll.claim(T0 + 10 * MINUTE, 1)).toEqual([]);
  });

  it('uses the background lane of the payments client', async () => {
    const lanes: unknown[] = [];
    const real = env.deps().payments;
    const payments: PaymentsClient = {
      ...real,
      getBalance: (opts) => {
        lanes.push(opts);
        return real.getBalance(opts);
      },
    };
    const { feed, tick } = instance('a', poster, clock, {}, { payments });
    await feed.subscribe(request());
    clock.now += MINUTE;
    await tick();
    expect(lanes).toEqual([undefined, { background: true }]);
  });

  it('says what each reading came to, and wakes the outbox only when there is something to post', async () => {
    let wakes = 0;
    const { feed, deps } = instance('a', poster, clock, {}, { wakeOutbox: () => (wakes += 1) });
    const job = feedJobsOf(deps, feed).poll;
    await feed.subscribe(request());
    const runAt = async (at: number) => {
      clock.now = at;
      const [row] = await job.claim(at, 1);
      return row ? job.run(row) : undefined;
    };
    expect(await runAt(T0 + MINUTE)).toEqual({
      outcome: 'unchanged',
      quiet: true,
      counts: { currencies: 0 },
    });
    expect(wakes).toBe(0);
    env.sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num('0.0013') }]);
    expect(await runAt(T0 + 2 * MINUTE)).toEqual({
      outcome: 'changed',
      quiet: false,
      counts: { currencies: 2 },
    });
    expect(wakes).toBe(1);
    expect(await readings()).toBe(2);
    expect(await runAt(T0 + 3 * MINUTE)).toMatchObject({ outcome: 'unchanged' });
    expect(await readings()).toBe(2); // an unchanged balance is not stored again
  });

  it('pauses on a rejected key: marks it, and looks again once per probe interval, not per poll', async () => {
    const { feed, deps, state } = instance('a', poster, clock, {}, { pollSeconds: 300 });
    const job = feedJobsOf(deps, feed).poll;
    await feed.subscribe(request());
    env.sandbox.failNext({ kind: 'status', status: 401, body: '{}' }, 1);
    clock.now = T0 + 300_000;
    const [row] = await job.claim(clock.now, 1);
    expect(row && (await job.run(row))).toEqual({ outcome: 'paused' });
    expect(await state.keyRejectedSince()).toBe(clock.now);
    expect((await pollRow()).next_run_at).toBe(clock.now + KEY_PROBE_MS);
  });

  it('waits a whole interval after a failing service', async () => {
    const { feed, deps } = instance('a', poster, clock, {}, { pollSeconds: 300 });
    const job = feedJobsOf(deps, feed).poll;
    await feed.subscribe(request());
    env.sandbox.failNext({ kind: 'status', status: 503 }, 10);
    clock.now = T0 + 300_000;
    const [row] = await job.claim(clock.now, 1);
    expect(row && (await job.run(row))).toEqual({ outcome: 'service_unavailable' });
    expect((await pollRow()).next_run_at).toBe(clock.now + 300_000);
  });

  it('lets a bug through instead of calling it a service failure', async () => {
    const payments: PaymentsClient = {
      ...env.deps().payments,
      getBalance: async () => {
        throw new TypeError('a bug');
      },
    };
    const { feed, deps } = instance('a', poster, clock, {}, { payments });
    await instance('b', poster, clock).feed.subscribe(request());
    clock.now += MINUTE;
    const { poll } = feedJobsOf(deps, feed);
    const [row] = await poll.claim(clock.now, 1);
    await expect(row && poll.run(row)).rejects.toThrow('a bug');
  });

  it('lets an instance whose lease ran out post nothing: the one that took over does', async () => {
    const a = instance('a', poster, clock, {}, { leaseMs: 1000 });
    const b = instance('b', poster, clock, {}, { leaseMs: 1000 });
    await a.feed.subscribe(request());
    env.sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num('3') }]);
    clock.now += MINUTE;
    const [aPoll, bPoll] = [feedJobsOf(a.deps, a.feed).poll, feedJobsOf(b.deps, b.feed).poll];
    const [stale] = await aPoll.claim(clock.now, 1);
    clock.now += 2000;
    const [fresh] = await bPoll.claim(clock.now, 1);
    expect(fresh && (await bPoll.run(fresh))).toMatchObject({ outcome: 'changed' });
    expect(stale && (await aPoll.run(stale))).toEqual({ outcome: 'lease_lost' });
    await b.tick();
    expect(feedPosts()).toHaveLength(1);
  });
});

describe('the digest, in detail', () => {
  const digestAt = async ({ feed, deps }: Pick<ReturnType<typeof instance>, 'feed' | 'deps'>, at: number) => {
    clock.now = at;
    const job = feedJobsOf(deps, feed).digest;
    const [sub] = await job.claim(at, 1);
    return sub ? job.run(sub) : undefined;
  };

  it('is due at the subscription’s next digest time', async () => {
    const { feed, deps } = instance('a', poster, clock);
    await feed.subscribe(request());
    const nine = Date.parse('2026-11-21T09:00:00Z');
    expect(await feedJobsOf(deps, feed).digest.nextDueAt?.(clock.now)).toBe(nine);
    const [sub] = await feedJobsOf(deps, feed).digest.claim(nine, 1);
    expect(sub && feedJobsOf(deps, feed).digest.dueAt(sub)).toBe(nine);
  });

  it('says "as of" the last successful reading, and shows no 24-hour change when nothing moved', async () => {
    const { feed, deps, tick } = instance('a', poster, clock);
    await feed.subscribe(request());
    clock.now = Date.parse('2026-11-21T08:59:00Z');
    await tick();
    expect(await digestAt({ feed, deps }, Date.parse('2026-11-21T09:00:00Z'))).toEqual({ outcome: 'sent' });
    await instance('a', poster, clock).tick();
    const [digest] = digestsIn();
    expect(visibleText(digest)).toContain('2026-11-21T08:59:00Z');
    expect(visibleText(digest)).not.toContain('in 24 h');
    expect(visibleText(digest)).not.toContain('late');
  });

  it('compares with the reading from 24 hours before, not the first one', async () => {
    const { feed, deps, tick } = instance('a', poster, clock);
    await feed.subscribe(request());
    env.sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num('0.0100') }]);
    clock.now = Date.parse('2026-11-21T08:30:00Z');
    await tick();
    env.sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num('0.0150') }]);
    clock.now = Date.parse('2026-11-22T08:00:00Z');
    await tick();
    expect(await digestAt({ feed, deps }, Date.parse('2026-11-22T09:00:00Z'))).toEqual({ outcome: 'sent' });
    await tick();
    const digest = digestsIn().at(-1);
    expect(visibleText(digest)).toContain('0.0150 BTC · +0.005 in 24 h');
    expect(digest?.text).toBe('Daily balance digest: The feed saw 1 rise and 0 falls in the last 24 hours.');
  });

  it('is marked late from five minutes late', async () => {
    const { feed, deps, tick } = instance('a', poster, clock);
    await feed.subscribe(request());
    expect(await digestAt({ feed, deps }, Date.parse('2026-11-21T09:05:00Z'))).toEqual({ outcome: 'sent' });
    await tick();
    expect(digestsIn()[0]?.text).toMatch(/^Daily balance digest \(late\)/);
  });

  it('sends nothing, quietly, when there is no reading to show', async () => {
    const { feed, deps, tick } = instance('a', poster, clock);
    await feed.subscribe(request());
    await env.store.db.deleteFrom('balance_history').execute();
    expect(await digestAt({ feed, deps }, Date.parse('2026-11-21T09:00:00Z'))).toEqual({
      outcome: 'unchanged',
      quiet: true,
    });
    await tick();
    expect(digestsIn()).toEqual([]);
    expect((await subscription()).next_digest_at).toBe(Date.parse('2026-11-22T09:00:00Z'));
  });

  it('logs how late a skipped digest was', async () => {
    const { feed } = instance('a', poster, clock);
    await feed.subscribe(request());
    const b = instance('b', poster, clock);
    expect(await digestAt(b, Date.parse('2026-11-21T21:30:00Z'))).toEqual({
      outcome: 'unchanged',
      quiet: true,
    });
    expect(b.logs.lines.find((l) => l.msg === 'a digest more than 12 hours late was skipped')).toMatchObject({
      level: 'warn',
      channel: FINANCE,
      lateMinutes: 750,
    });
  });

  it('is not sent by an instance whose lease ran out', async () => {
    const a = instance('a', poster, clock, {}, { leaseMs: 1000 });
    const b = instance('b', poster, clock, {}, { leaseMs: 1000 });
    await a.feed.subscribe(request());
    const nine = Date.parse('2026-11-21T09:00:00Z');
    const [aDigest, bDigest] = [feedJobsOf(a.deps, a.feed).digest, feedJobsOf(b.deps, b.feed).digest];
    const [stale] = await aDigest.claim(nine, 1);
    clock.now = nine + 2000;
    const [fresh] = await bDigest.claim(clock.now, 1);
    expect(fresh && (await bDigest.run(fresh))).toEqual({ outcome: 'sent' });
    expect(stale && (await aDigest.run(stale))).toEqual({ outcome: 'lease_lost' });
    await b.tick();
    expect(digestsIn()).toHaveLength(1);
  });
});

describe('subscriptions, in detail', () => {
  it('keeps the running feed’s baseline when a second channel subscribes', async () => {
    poster.conversations.set('G0OTHER', { isPrivate: true, isDirect: false, isShared: false });
    const { feed, tick } = instance('a', poster, clock);
    await feed.subscribe(request());
    env.sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num('5') }]);
    clock.now += 30_000;
    await feed.subscribe(request({ channelId: 'G0OTHER' }));
    expect(await readings()).toBe(1);
    clock.now = T0 + MINUTE;
    await tick();
    expect(feedPosts().map((p) => p.text)).toEqual(['Balance changed in 2 currencies']);
    expect(feedPosts('G0OTHER').map((p) => p.text)).toEqual(['Balance changed in 2 currencies']);
  });

  it('asks to be invited when the confirmation cannot be posted, and lets other failures through', async () => {
    const { feed } = instance('a', poster, clock);
    poster.failNext(new SlackPostError('not_in_channel', 'not_in_channel'));
    expect(await feed.subscribe(request())).toEqual({ kind: 'not_in_channel' });
    poster.failNext(new SlackPostError('transient', undefined));
    await expect(feed.subscribe(request())).rejects.toThrow(SlackPostError);
    expect(await feed.list(HOME_TEAM)).toEqual([]);
  });

  it('wakes the outbox for an unsubscribe that ends a feed, not for one that ends nothing', async () => {
    let wakes = 0;
    const { feed } = instance('a', poster, clock, {}, { wakeOutbox: () => (wakes += 1) });
    expect(await feed.unsubscribe(request())).toEqual({ kind: 'not_subscribed' });
    expect(wakes).toBe(0);
    await feed.subscribe(request());
    expect(await feed.unsubscribe(request())).toEqual({ kind: 'unsubscribed' });
    expect(wakes).toBe(1);
    expect(await subscription()).toMatchObject({ state: 'ended', end_reason: 'unsubscribed', ended_at: T0 });
  });
});

describe('delivery checks', () => {
  const row = { subscription_id: null } as Parameters<ReturnType<typeof createFeed>['mayDeliver']>[0];

  it('lets through messages that belong to no feed', async () => {
    const { feed } = instance('a', poster, clock);
    expect(await feed.mayDeliver(row)).toBe(true);
    expect(poster.calls).toEqual([]);
  });

  it('drops a feed message whose subscription ended, without asking Slack', async () => {
    const { feed } = instance('a', poster, clock);
    await feed.subscribe(request());
    const { id } = await subscription();
    await feed.unsubscribe(request());
    const before = poster.calls.length;
    expect(await feed.mayDeliver({ ...row, subscription_id: id })).toBe(false);
    expect(await feed.mayDeliver({ ...row, subscription_id: 'gone' })).toBe(false);
    expect(poster.calls).toHaveLength(before);
  });

  it.each([
    ['the bot can no longer see the channel', () => poster.closedChannels.add(FINANCE), 'not_in_channel'],
    [
      'the channel is no longer private',
      () => poster.conversations.set(FINANCE, { isPrivate: false, isDirect: false, isShared: false }),
      'public_channel',
    ],
  ])('stops the feed when %s, and says so to the subscriber', async (why, change, reason) => {
    const { feed, logs } = instance('a', poster, clock);
    await feed.subscribe(request());
    const { id } = await subscription();
    change();
    if (reason === 'not_in_channel') poster.failNext(new SlackPostError('not_in_channel', 'not_in_channel'));
    expect(await feed.mayDeliver({ ...row, subscription_id: id })).toBe(false);
    expect(await subscription()).toMatchObject({ state: 'ended', end_reason: reason });
    await instance('a', poster, clock).tick();
    expect(visibleText(poster.repliesIn('U0FINANCE')[0])).toContain(`has stopped: ${why}.`);
    expect(logs.lines.find((l) => String(l.msg).startsWith('payments feed stopped'))).toMatchObject({
      channel: FINANCE,
      reason,
    });
  });

  it('still delivers to a channel that may receive the feed', async () => {
    const { feed } = instance('a', poster, clock);
    await feed.subscribe(request());
    const { id } = await subscription();
    expect(await feed.mayDeliver({ ...row, subscription_id: id })).toBe(true);
  });
});

describe('the feed, at its edges', () => {
  it('has nothing due before anyone subscribes', async () => {
    const { feed, deps } = instance('a', poster, clock);
    expect(await feedJobsOf(deps, feed).poll.nextDueAt?.(clock.now)).toBeUndefined();
    expect(await feedJobsOf(deps, feed).digest.nextDueAt?.(clock.now)).toBeUndefined();
  });

  it('does not take a failing service for a rejected key', async () => {
    const { feed, deps, state } = instance('a', poster, clock);
    await feed.subscribe(request());
    env.sandbox.failNext({ kind: 'status', status: 503 }, 10);
    clock.now += MINUTE;
    const { poll } = feedJobsOf(deps, feed);
    const [row] = await poll.claim(clock.now, 1);
    if (row) await poll.run(row);
    expect(await state.keyRejectedSince()).toBeUndefined();
  });

  it('claims nothing while the key is rejected and the probe is not due, and never twice at once', async () => {
    const a = instance('a', poster, clock);
    const b = instance('b', poster, clock);
    await a.feed.subscribe(request());
    clock.now += MINUTE;
    expect(await feedJobsOf(a.deps, a.feed).poll.claim(clock.now, 1)).toHaveLength(1);
    expect(await feedJobsOf(b.deps, b.feed).poll.claim(clock.now, 1)).toEqual([]); // a holds the lease
    await a.state.markKeyRejected(clock.now);
    clock.now += 31_000; // a's lease has run out: this claim is a's probe
    expect(await feedJobsOf(a.deps, a.feed).poll.claim(clock.now, 1)).toHaveLength(1);
    clock.now += 31_000; // that lease has run out too, but the next probe is not due yet
    expect(await feedJobsOf(a.deps, a.feed).poll.claim(clock.now, 1)).toEqual([]);
    clock.now += KEY_PROBE_MS - 31_000;
    expect(await feedJobsOf(a.deps, a.feed).poll.claim(clock.now, 1)).toHaveLength(1);
  });

  it('marks a digest late from five minutes, not four', async () => {
    const { feed, tick } = instance('a', poster, clock);
    await feed.subscribe(request());
    clock.now = Date.parse('2026-11-21T09:04:00Z');
    await tick();
    expect(digestsIn()[0]?.text).toMatch(/^Daily balance digest:/);
  });

  it('gives no "changes since" date when it has only one reading, and logs nothing for a digest on time', async () => {
    const { feed, tick, logs } = instance('a', poster, clock);
    await feed.subscribe(request());
    clock.now = Date.parse('2026-11-21T09:00:00Z');
    await tick();
    expect(visibleText(digestsIn()[0])).not.toContain('changes since');
    expect(logs.lines.filter((l) => l.level === 'warn')).toEqual([]);
  });

  it('sends the earliest digests first, and lets no other instance take one it holds', async () => {
    poster.conversations.set('G0EVENING', { isPrivate: true, isDirect: false, isShared: false });
    const a = instance('a', poster, clock);
    const b = instance('b', poster, clock);
    await a.feed.subscribe(request({ channelId: 'G0EVENING', digest: { hour: 18, minute: 0, zone: 'UTC' } }));
    await a.feed.subscribe(request());
    expect(await feedJobsOf(a.deps, a.feed).digest.nextDueAt?.(clock.now)).toBe(
      Date.parse('2026-11-21T09:00:00Z'),
    );
    const evening = Date.parse('2026-11-21T18:00:00Z');
    const claimed = await feedJobsOf(a.deps, a.feed).digest.claim(evening, 2);
    expect(claimed.map((s) => s.channel_id)).toEqual([FINANCE, 'G0EVENING']);
    expect(await feedJobsOf(b.deps, b.feed).digest.claim(evening, 2)).toEqual([]);
  });

  it('lets a Slack refusal of the confirmation through, and wakes nothing for an unsubscribe with no feed', async () => {
    let wakes = 0;
    const refusing: RecordingPoster = {
      ...poster,
      post: async () => {
        throw new SlackPostError('refused', 'invalid_blocks');
      },
    };
    const { feed } = instance('a', refusing, clock, {}, { wakeOutbox: () => (wakes += 1) });
    await expect(feed.subscribe(request())).rejects.toThrow(SlackPostError);
    expect(await feed.unsubscribe(request())).toEqual({ kind: 'not_subscribed' });
    expect(wakes).toBe(0);
  });

  it('turns a feed off once when two instances are asked at the same moment', async () => {
    const a = instance('a', poster, clock);
    const b = instance('b', poster, clock);
    await a.feed.subscribe(request());
    const results = await Promise.all([a.feed.unsubscribe(request()), b.feed.unsubscribe(request())]);
    expect(results.map((r) => r.kind).sort()).toEqual(['not_subscribed', 'unsubscribed']);
    await a.tick();
    expect(feedPosts().filter((p) => p.text.includes('turned off'))).toHaveLength(1);
  });
});

describe('a feed stopped by two deliveries at once', () => {
  it('is stopped once, with one notice to its subscriber', async () => {
    const { feed } = instance('a', poster, clock);
    await feed.subscribe(request());
    const { id } = await subscription();
    poster.conversations.set(FINANCE, { isPrivate: false, isDirect: false, isShared: false });
    const row = { subscription_id: id } as Parameters<typeof feed.mayDeliver>[0];
    expect(await Promise.all([feed.mayDeliver(row), feed.mayDeliver(row)])).toEqual([false, false]);
    await instance('a', poster, clock).tick();
    expect(poster.repliesIn('U0FINANCE').filter((m) => visibleText(m).includes('has stopped'))).toHaveLength(
      1,
    );
  });
});
