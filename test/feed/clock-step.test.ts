import { beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_DIGEST } from '../../src/feed/schedule.js';
import { num } from '../../src/sandbox/data.js';
import { HOME_TEAM } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { type RecordingPoster, recordingPoster } from '../support/fake-slack.js';
import { useSandbox } from '../support/use-sandbox.js';
import { feedInstance } from './feed-instance.js';

/**
 * "The latest reading" is the one the database numbered last, whatever the clock of the instance
 * that took it said: a clock stepped back, or two instances whose clocks differ, never make an
 * older reading look newer and the same payment announced again at every poll.
 */

const env = useSandbox();
const FINANCE = 'G0FINANCE';
const MINUTE = 60_000;
const T0 = Date.parse('2026-11-21T08:00:00Z');

let poster: RecordingPoster;
beforeEach(async () => {
  poster = recordingPoster();
  poster.conversations.set(FINANCE, { isPrivate: true, isDirect: false, isShared: false });
  await emptyWork(env.store);
  env.sandbox.reset();
  env.sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num('0') }]);
});

const subscribe = (feed: ReturnType<typeof feedInstance>['feed']) =>
  feed.subscribe({ teamId: HOME_TEAM, channelId: FINANCE, userId: 'U0FINANCE', digest: DEFAULT_DIGEST });
const feedTexts = () =>
  poster
    .repliesIn(FINANCE)
    .slice(1)
    .map((m) => m.text);

describe('the latest balance reading', () => {
  it('is the last one stored after the clock steps back ten minutes: each payment is announced once', async () => {
    const clock = { now: T0 };
    const a = feedInstance(env, 'a', poster, clock);
    await subscribe(a.feed);
    env.sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num('1') }]);
    clock.now += MINUTE;
    await a.tick();
    clock.now -= 10 * MINUTE;
    env.sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num('3') }]);
    for (let poll = 0; poll < 5; poll += 1) {
      clock.now += MINUTE;
      await a.tick();
    }
    expect(feedTexts()).toEqual(['Received: +1 BTC', 'Received: +2 BTC']);
    expect(await env.store.db.selectFrom('feed_changes').select('currency').execute()).toHaveLength(2);
  });

  it('is the last one stored when two instances’ clocks are three minutes apart', async () => {
    const behind = { now: T0 };
    const ahead = { now: T0 + 3 * MINUTE };
    const a = feedInstance(env, 'ahead', poster, ahead);
    const b = feedInstance(env, 'behind', poster, behind);
    await subscribe(b.feed);
    env.sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num('1') }]);
    // Both poll as a poll falls due on either clock, the one behind pulling back times written
    // ahead of its own; a second payment comes in between.
    for (let round = 0; round < 4; round += 1) {
      ahead.now += MINUTE;
      behind.now += MINUTE;
      await a.tick();
      if (round === 1) env.sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num('2.5') }]);
      await b.tick();
    }
    expect(feedTexts()).toEqual(['Received: +1 BTC', 'Received: +1.5 BTC']);
    expect(await env.store.db.selectFrom('feed_changes').select('currency').execute()).toHaveLength(2);
  });
});
