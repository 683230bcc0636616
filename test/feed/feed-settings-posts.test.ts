import { describe, expect, it } from 'vitest';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { HOME_TEAM } from '../support/bolt.js';
import { clock, subscription, useFeedService } from './feed-service-setup.js';
import { tuned } from './tuned-feed.js';

/**
 * What a channel's Settings, saved through the modal, do to its feed: movements held below a
 * minimum and their exact sums in the next post and the digest, condensed posts of the chosen
 * coins, a weekly digest, and none.
 */

useFeedService();

const ON_DAY = (day: number) => Date.parse(`2026-11-${day}T09:00:00Z`);

describe('a minimum per coin', () => {
  it('holds smaller movements and shows their exact sum in the next post and in the digest', async () => {
    const feed = await tuned({ feed_minimums: 'BTC 0.01' });
    await feed.balances('0.0022'); // +0.001
    await feed.balances('0.0024'); // +0.0002
    expect(feed.posts()).toEqual([]);
    await feed.balances('0.5024'); // +0.5, posted with what was held
    await feed.balances('0.5034'); // +0.001, held again
    const [post, ...more] = feed.posts();
    expect(more).toEqual([]);
    expectValidMessage(post);
    expect(post?.text).toBe(
      'Received: +0.5 BTC Held below this channel’s minimums since the last post: +0.0012 BTC (2 movements)',
    );
    expect(visibleText(post)).toContain('+0.0012 BTC (2 movements)');
    clock.now = ON_DAY(21);
    await feed.bot.tick();
    const digest = feed.posts().at(-1);
    expectValidMessage(digest);
    expect(digest?.text).toMatch(/^Daily balance digest: /);
    expect(digest?.text).toMatch(
      /Held below this channel’s minimums in this period: \+0\.0022 BTC \(3 movements\)$/,
    );
  });

  it('posts a movement at the minimum, and one of another coin, at once', async () => {
    const feed = await tuned({ feed_minimums: 'BTC 0.001' });
    await feed.balances('0.0022', '1.6');
    expect(feed.posts().map((p) => p.text)).toEqual(['Received: +0.001 BTC, +0.1 USDT-TRC20']);
  });
});

describe('the coins posted and condensed posts', () => {
  it('posts only the chosen coins, each movement in one line', async () => {
    const feed = await tuned({ feed_coins: ['USDT-TRC20'], feed_style: 'condensed' });
    await feed.balances('1.0012');
    expect(feed.posts()).toEqual([]);
    await feed.balances('1.0012', '1234567.25');
    const [post] = feed.posts();
    expectValidMessage(post);
    expect(post?.text).toBe('Payments feed: +1234565.75 USDT-TRC20');
    // The digest counts and lists the chosen coins only.
    clock.now = ON_DAY(21);
    await feed.bot.tick();
    const digest = feed.posts().at(-1);
    expect(digest?.text).toBe(
      'Daily balance digest: The feed saw 1 rise and 0 falls since the feed began. Balances: 1234567.25 USDT-TRC20',
    );
    expect(post?.blocks[0]).toMatchObject({
      type: 'section',
      text: { text: ':moneybag: +1,234,565.75 USDT-TRC20' },
    });
  });
});

describe('the digest’s charts', () => {
  it('chart only the coins the channel chose', async () => {
    clock.now = ON_DAY(17);
    const feed = await tuned({ feed_coins: ['USDT-TRC20'] });
    for (const [day, btc, usdt] of [
      [18, '5', '10'],
      [19, '50', '20'],
      [20, '500', '30'],
    ] as const) {
      // Each day's digest goes out on time (ticks after its 09:00), the readings moving between them.
      clock.now = ON_DAY(day) + 3_600_000;
      await feed.balances(btc, usdt);
    }
    clock.now = ON_DAY(21);
    await feed.bot.tick();
    const digest = feed.posts().at(-1);
    expectValidMessage(digest);
    const charts = (digest?.blocks ?? []).filter((b) => b.type === 'data_visualization');
    expect(charts).toHaveLength(1);
    expect(JSON.stringify(charts)).toContain('USDT-TRC20');
    expect(JSON.stringify(charts)).not.toContain('BTC');
  });
});

describe('the digest’s schedule', () => {
  it('goes out weekly on the chosen day and time, and moves on a week', async () => {
    const feed = await tuned({
      feed_digest: 'weekly',
      feed_weekday: '3',
      feed_digest_time: '10:00',
      feed_zone: 'Europe/Berlin',
    });
    // Saturday 21 November: the next Wednesday at 10:00 in Berlin is 09:00 UTC.
    expect((await subscription()).next_digest_at).toBe(ON_DAY(25));
    // `/balance subscriptions` and the App Home say it.
    expect((await feed.bot.feed.list(HOME_TEAM)).map((f) => f.digest)).toEqual([
      'Wednesdays 10:00 Europe/Berlin',
    ]);
    for (const day of [22, 23, 24]) {
      clock.now = ON_DAY(day);
      await feed.bot.tick();
    }
    expect(feed.posts()).toEqual([]);
    clock.now = ON_DAY(25);
    await feed.bot.tick();
    const [digest, ...more] = feed.posts();
    expect(more).toEqual([]);
    expectValidMessage(digest);
    expect(digest?.text).toMatch(
      /^Weekly balance digest: The feed saw 0 rises and 0 falls in the last 7 days\./,
    );
    expect((await subscription()).next_digest_at).toBe(Date.parse('2026-12-02T09:00:00Z'));
  });

  it('sends none while off, and the next one at the time set when it is on again', async () => {
    const feed = await tuned({ feed_digest: 'off' });
    for (const day of [21, 22, 23]) {
      clock.now = ON_DAY(day);
      await feed.bot.tick();
    }
    expect(feed.posts()).toEqual([]);
    expect((await feed.bot.feed.list(HOME_TEAM)).map((f) => f.digest)).toEqual(['off']);
    clock.now = Date.parse('2026-11-23T12:00:00Z');
    await feed.save({ feed_digest: 'daily', feed_digest_time: '13:30' });
    expect((await subscription()).next_digest_at).toBe(Date.parse('2026-11-23T13:30:00Z'));
    clock.now = Date.parse('2026-11-23T13:30:00Z');
    await feed.bot.tick();
    expect(feed.posts().map((p) => p.text.split(':')[0])).toEqual([
      '<@U0ANA> set the digest to every day at 13',
      'Daily balance digest',
    ]);
  });
});
