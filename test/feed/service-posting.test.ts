import { describe, expect, it } from 'vitest';
import { num } from '../../src/sandbox/data.js';
import { KEY_PROBE_MS } from '../../src/service-state.js';
import { SlackPostError } from '../../src/slack/calls.js';
import { visibleText } from '../support/block-kit.js';
import { HOME_TEAM } from '../support/bolt.js';
import type { RecordingPoster } from '../support/fake-slack.js';
import { feedJobsOf } from '../support/jobs.js';
import {
  clock,
  digestsIn,
  env,
  FINANCE,
  feedPosts,
  instance,
  MINUTE,
  poster,
  request,
  subscription,
  useFeedService,
} from './feed-service-setup.js';

/** The feed service: what the balance feed posts, at its edges too, and how it stops. */

useFeedService();

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
