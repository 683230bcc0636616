import { describe, expect, it } from 'vitest';
import { feedQueries } from '../../src/feed/queries.js';
import { installationId } from '../../src/store/keys.js';
import { feedJobsOf } from '../support/jobs.js';
import { useSandbox } from '../support/use-sandbox.js';
import { FINANCE, financeChannel, T0, troubledStore } from './finance-channel.js';

/**
 * The store failing under the feed, and the feed's rows changing under a request: a failure
 * reaches the scheduler's log (or the person) as what it is, never as a lost lease, and nothing
 * is announced that did not happen.
 */

const env = useSandbox();
const world = financeChannel(env);
const DISK = new Error('SQLITE_IOERR: disk I/O error');
const NINE = Date.parse('2026-11-21T09:00:00Z');

/** A feed on FINANCE, by an instance whose store the test troubles. */
async function troubledFeed() {
  const { store, trouble } = troubledStore(env.store);
  const bot = world.instance('a', { store });
  await bot.feed.subscribe(world.request());
  return { ...bot, trouble, jobs: feedJobsOf(bot.deps, bot.feed) };
}

describe('the store failing during the feed’s work', () => {
  it('fails the reading for the scheduler to log, and the payment is announced once the store is back', async () => {
    const { tick, trouble } = await troubledFeed();
    trouble.failing = DISK;
    await expect(world.payment(tick)).rejects.toThrow(DISK);
    trouble.failing = undefined;
    await world.payment(tick);
    expect(world.said().slice(1)).toEqual(['Received: +1 BTC']);
  });

  it('fails the digest for the scheduler to log, not taken for another instance having it', async () => {
    const { jobs, trouble } = await troubledFeed();
    world.clock.now = NINE;
    const [due] = await jobs.digest.claim(NINE, 1);
    trouble.failing = DISK;
    await expect(due && jobs.digest.run(due)).rejects.toThrow(DISK);
  });

  it('fails a subscription with the store’s error, and starts nothing', async () => {
    const { store, trouble } = troubledStore(env.store);
    const { feed, tick } = world.instance('a', { store });
    trouble.failing = DISK;
    await expect(feed.subscribe(world.request())).rejects.toThrow(DISK);
    trouble.failing = undefined;
    await tick();
    expect(world.said()).toEqual([]);
    expect(await feed.list(world.request().teamId)).toEqual([]);
  });
});

describe('a request meeting a feed that ended meanwhile', () => {
  it('turns the feed on again at the new time when it was turned off as its digest was being moved', async () => {
    const { feed, tick, trouble } = await troubledFeed();
    const other = world.instance('b');
    trouble.before = async () => {
      await other.feed.unsubscribe({ channelId: FINANCE, userId: 'U0OTHER' });
      await other.tick();
    };
    const ten = { hour: 10, minute: 0, zone: 'UTC' };
    expect(await feed.subscribe(world.request({ digest: ten, move: true }))).toEqual({
      kind: 'subscribed',
      digest: '10:00 UTC',
    });
    await tick();
    expect(world.said()).toEqual([
      expect.stringMatching(/^Payments feed turned on/),
      '<@U0OTHER> turned off the payments feed in this channel.',
      expect.stringMatching(/^Payments feed turned on/),
    ]);
    expect(await feed.list(world.request().teamId)).toMatchObject([{ digest: '10:00 UTC' }]);
  });

  it('keeps, for whoever looks at the store, why a feed whose first message Slack refused ended', async () => {
    const { feed } = world.instance();
    world.poster.closedChannels.add(FINANCE);
    expect(await feed.subscribe(world.request())).toEqual({ kind: 'not_in_channel' });
    expect(await env.store.db.selectFrom('feed_subscriptions').selectAll().execute()).toMatchObject([
      { channel_id: FINANCE, state: 'ended', end_reason: 'not_started', ended_at: T0 },
    ]);
  });
});

describe('the feed’s work with nothing stored to work from', () => {
  it('skips a digest with no reading to show without logging it as late', async () => {
    const { jobs, logs } = await troubledFeed();
    await env.store.db.deleteFrom('balance_history').execute();
    world.clock.now = NINE;
    const [due] = await jobs.digest.claim(NINE, 1);
    expect(due && (await jobs.digest.run(due))).toEqual({ outcome: 'unchanged', quiet: true });
    expect(logs.lines.filter((l) => l.level === 'warn')).toEqual([]);
  });

  it('has no successful reading before the first poll, and no account for an installation removed meanwhile', async () => {
    const gone = feedQueries(env.store, installationId('T0GONE'));
    expect(await gone.pollSucceededAt(env.store.db)).toBeUndefined();
    expect(await gone.readsAccount(env.store.db, T0)).toBe(false);
  });
});
