import { describe, expect, it } from 'vitest';
import type { createFeed } from '../../src/feed/service.js';
import type { PaymentsClient } from '../../src/payments/index.js';
import { num } from '../../src/sandbox/data.js';
import { KEY_PROBE_MS } from '../../src/service-state.js';
import { SlackPostError } from '../../src/slack/calls.js';
import { visibleText } from '../support/block-kit.js';
import { feedJobsOf } from '../support/jobs.js';
import {
  clock,
  env,
  FINANCE,
  feedPosts,
  instance,
  MINUTE,
  pollRow,
  poster,
  readings,
  request,
  subscription,
  T0,
  useFeedService,
} from './feed-service-setup.js';

/** The feed service: the balance poll in detail, and the checks before each delivery. */

useFeedService();

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
