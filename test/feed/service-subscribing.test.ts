import { describe, expect, it } from 'vitest';
import { num } from '../../src/sandbox/data.js';
import { SlackPostError } from '../../src/slack/calls.js';
import { visibleText } from '../support/block-kit.js';
import { HOME_TEAM } from '../support/bolt.js';
import {
  clock,
  env,
  FINANCE,
  feedPosts,
  instance,
  MINUTE,
  poster,
  readings,
  request,
  subscription,
  T0,
  useFeedService,
} from './feed-service-setup.js';

/** The feed service: subscribing a channel to the balance feed, and unsubscribing. */

useFeedService();

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
