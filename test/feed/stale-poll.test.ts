import { beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_DIGEST } from '../../src/feed/schedule.js';
import { HOME_TEAM } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { type RecordingPoster, recordingPoster } from '../support/fake-slack.js';
import { feedJobsOf } from '../support/jobs.js';
import { useSandbox } from '../support/use-sandbox.js';
import { feedInstance } from './feed-instance.js';

/**
 * A balance poll whose lease ran out while the service was failing it: the instance that took
 * over has the poll, and the stale one writes nothing, whichever way its call ended.
 */
const env = useSandbox();
const FINANCE = 'G0FINANCE';
const MINUTE = 60_000;

let clock: { now: number };
let poster: RecordingPoster;
beforeEach(async () => {
  clock = { now: Date.parse('2026-11-21T05:00:00Z') };
  poster = recordingPoster();
  poster.conversations.set(FINANCE, { isPrivate: true, isDirect: false, isShared: false });
  await emptyWork(env.store);
  env.sandbox.reset();
});

describe('a stale balance poll the service fails', () => {
  it('ends lease_lost and moves the poll on nowhere: the instance that took over keeps its schedule', async () => {
    const a = feedInstance(env, 'a', poster, clock, {}, { leaseMs: 1000 });
    const b = feedInstance(env, 'b', poster, clock, {}, { leaseMs: 1000 });
    await a.feed.subscribe({
      teamId: HOME_TEAM,
      channelId: FINANCE,
      userId: 'U0FINANCE',
      digest: DEFAULT_DIGEST,
    });
    clock.now += MINUTE;
    const [aPoll, bPoll] = [feedJobsOf(a.deps, a.feed).poll, feedJobsOf(b.deps, b.feed).poll];
    const [stale] = await aPoll.claim(clock.now, 1);
    clock.now += 2000;
    const [fresh] = await bPoll.claim(clock.now, 1);
    expect(fresh && (await bPoll.run(fresh))).toMatchObject({ outcome: 'unchanged' });
    const schedule = async () =>
      (
        await env.store.db
          .selectFrom('singletons')
          .select(['next_run_at'])
          .where('name', '=', 'balance_poll')
          .execute()
      ).map((r) => Number(r.next_run_at));
    const taken = await schedule();
    env.sandbox.failNext({ kind: 'status', status: 503 }, 1);
    expect(stale && (await aPoll.run(stale))).toEqual({ outcome: 'lease_lost' });
    expect(await schedule()).toEqual(taken);
  });
});
