import { beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_DIGEST } from '../../src/feed/schedule.js';
import type { SubscribeRequest } from '../../src/feed/service.js';
import { visibleText } from '../support/block-kit.js';
import { HOME_TEAM } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { type RecordingPoster, recordingPoster } from '../support/fake-slack.js';
import { feedJobsOf } from '../support/jobs.js';
import { useSandbox } from '../support/use-sandbox.js';
import { feedInstance } from './feed-instance.js';

/** Issue 30, point 6: a channel's digest moves to another time in place, from the next one on. */
const env = useSandbox();
const FINANCE = 'G0FINANCE';
const T0 = Date.parse('2026-11-21T05:00:00Z');
const KYIV_0830 = { hour: 8, minute: 30, zone: 'Europe/Kyiv' };

let clock: { now: number };
let poster: RecordingPoster;
beforeEach(async () => {
  clock = { now: T0 };
  poster = recordingPoster();
  poster.conversations.set(FINANCE, { isPrivate: true, isDirect: false, isShared: false });
  await emptyWork(env.store);
  env.sandbox.reset();
});

const request = (overrides: Partial<SubscribeRequest> = {}): SubscribeRequest => ({
  teamId: HOME_TEAM,
  channelId: FINANCE,
  userId: 'U0FINANCE',
  digest: DEFAULT_DIGEST,
  ...overrides,
});
const digests = () => poster.repliesIn(FINANCE).filter((p) => p.text.startsWith('Daily'));

describe('moving a channel’s digest', () => {
  it('sends the next digest at the new time, not the old one, and tells the channel once', async () => {
    const { feed, tick } = instance();
    await feed.subscribe(request());
    expect(await feed.subscribe(request({ userId: 'U0OTHER', digest: KYIV_0830, move: true }))).toEqual({
      kind: 'moved',
      digest: '08:30 Europe/Kyiv',
      was: '09:00 UTC',
      cadence: { digest: 'daily', weekday: 1 },
    });
    await tick();
    expect(poster.repliesIn(FINANCE).map((m) => visibleText(m))).toContain(
      '<@U0OTHER> moved the daily balance digest of this channel to 08:30 Europe/Kyiv (it was at 09:00 UTC).',
    );
    // 08:30 in Kyiv is 06:30 UTC in November.
    clock.now = Date.parse('2026-11-21T06:30:00Z');
    await tick();
    expect(digests()).toHaveLength(1);
    clock.now = Date.parse('2026-11-21T09:00:00Z');
    await tick();
    expect(digests()).toHaveLength(1);
    expect(await feed.list(HOME_TEAM)).toMatchObject([
      { digest: '08:30 Europe/Kyiv', subscriberId: 'U0FINANCE' },
    ]);
  });

  it('is not undone by a digest being sent at that moment: that one loses its lease, the new time stands', async () => {
    const { feed, deps, tick } = instance();
    await feed.subscribe(request());
    const nine = Date.parse('2026-11-21T09:00:00Z');
    clock.now = nine;
    const job = feedJobsOf(deps, feed).digest;
    const [claimed] = await job.claim(nine, 1);
    await feed.subscribe(request({ digest: { hour: 10, minute: 0, zone: 'UTC' }, move: true }));
    expect(claimed && (await job.run(claimed))).toEqual({ outcome: 'lease_lost' });
    await tick();
    expect(digests()).toEqual([]);
    clock.now = Date.parse('2026-11-21T10:00:00Z');
    await tick();
    expect(digests()).toHaveLength(1);
  });

  it('turns a feed on at that time where the channel has none', async () => {
    const { feed } = instance();
    expect(await feed.subscribe(request({ digest: KYIV_0830, move: true }))).toEqual({
      kind: 'subscribed',
      digest: '08:30 Europe/Kyiv',
    });
  });
});

function instance() {
  return feedInstance(env, 'a', poster, clock);
}
