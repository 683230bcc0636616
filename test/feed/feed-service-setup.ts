import { beforeEach } from 'vitest';
import { DEFAULT_DIGEST } from '../../src/feed/schedule.js';
import type { SubscribeRequest } from '../../src/feed/service.js';
import { num } from '../../src/sandbox/data.js';
import { HOME_TEAM } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { type RecordingPoster, recordingPoster } from '../support/fake-slack.js';
import { useSandbox } from '../support/use-sandbox.js';
import { feedInstance, type InstanceOptions } from './feed-instance.js';

/**
 * Set-up shared by the feed service's test files (service-*.test.ts): one sandbox and store per
 * file, and before each test a fresh fake Slack, a clock at T0 and two balances. `env`, `clock`
 * and `poster` are live bindings: a test reads the current test's.
 */

export const FINANCE = 'G0FINANCE';
export const MINUTE = 60_000;
export const T0 = Date.parse('2026-11-21T08:00:00Z');

export let env: ReturnType<typeof useSandbox>;
export let clock: { now: number };
export let poster: RecordingPoster;

/** Registers the file's sandbox and the fresh state of each test; call once, at the top of a test file. */
export function useFeedService(): void {
  env = useSandbox();
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
}

export const instance = (
  name: string,
  poster: RecordingPoster,
  clock: { now: number },
  policy = {},
  opts: InstanceOptions = {},
) => feedInstance(env, name, poster, clock, policy, opts);

export const request = (overrides: Partial<SubscribeRequest> = {}): SubscribeRequest => ({
  teamId: HOME_TEAM,
  channelId: FINANCE,
  userId: 'U0FINANCE',
  digest: DEFAULT_DIGEST,
  ...overrides,
});
export const feedPosts = (channel = FINANCE) => poster.repliesIn(channel).slice(1); // after the confirmation

export const pollRow = () =>
  env.store.db
    .selectFrom('singletons')
    .selectAll()
    .where('name', '=', 'balance_poll')
    .executeTakeFirstOrThrow();
export const readings = async () =>
  (await env.store.db.selectFrom('balance_history').select('id').execute()).length;
export const subscription = (channel = FINANCE) =>
  env.store.db
    .selectFrom('feed_subscriptions')
    .selectAll()
    .where('channel_id', '=', channel)
    .executeTakeFirstOrThrow();
export const digestsIn = (channel = FINANCE) =>
  poster.repliesIn(channel).filter((p) => p.text.startsWith('Daily'));
