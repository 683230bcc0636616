import { beforeEach } from 'vitest';
import type { AccessPolicy } from '../../src/access.js';
import { DEFAULT_DIGEST } from '../../src/feed/schedule.js';
import type { SubscribeRequest } from '../../src/feed/service.js';
import { num } from '../../src/sandbox/data.js';
import type { Store } from '../../src/store/database.js';
import { HOME_TEAM } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { type RecordingPoster, recordingPoster } from '../support/fake-slack.js';
import type { useSandbox } from '../support/use-sandbox.js';
import { feedInstance, type InstanceOptions } from './feed-instance.js';

export const FINANCE = 'G0FINANCE';
const MINUTE = 60_000;
export const T0 = Date.parse('2026-11-21T08:00:00Z');

/**
 * The store, with a say in its next transactions: `failing` makes each throw that error (the
 * disk full, the database gone) until set back to undefined; `before` runs once, just before
 * the next one starts, as another instance acting at that very moment would.
 */
export function troubledStore(store: Store) {
  const trouble: { failing?: Error | undefined; before?: (() => Promise<unknown>) | undefined } = {};
  const troubled: Store = {
    ...store,
    async transaction(work) {
      if (trouble.failing) throw trouble.failing;
      const before = trouble.before;
      trouble.before = undefined;
      await before?.();
      return store.transaction(work);
    },
  };
  return { store: troubled, trouble };
}

/**
 * A private finance channel the bot is in, a merchant holding 0.0012 BTC, a clock at T0 the test
 * moves, and a fresh fake Slack for each test: the setting of most feed tests.
 */
export function financeChannel(env: ReturnType<typeof useSandbox>) {
  let clock = { now: T0 };
  let poster: RecordingPoster = recordingPoster();
  beforeEach(async () => {
    clock = { now: T0 };
    poster = recordingPoster();
    poster.conversations.set(FINANCE, { isPrivate: true, isDirect: false, isShared: false });
    await emptyWork(env.store);
    env.sandbox.reset();
    env.sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num('0.0012') }]);
  });

  const request = (overrides: Partial<SubscribeRequest> = {}): SubscribeRequest => ({
    teamId: HOME_TEAM,
    channelId: FINANCE,
    userId: 'U0FIN',
    digest: DEFAULT_DIGEST,
    ...overrides,
  });

  return {
    get clock() {
      return clock;
    },
    get poster() {
      return poster;
    },
    request,
    /** One instance of the bot, named `name`, over `store` (the sandbox's by default). */
    instance(
      name = 'a',
      opts: InstanceOptions & { store?: Store; policy?: Pick<AccessPolicy, 'allowedChannels'> } = {},
    ) {
      const { store, policy, ...rest } = opts;
      return feedInstance(store ? { ...env, store } : env, name, poster, clock, policy, rest);
    },
    /** A payment arrives: the balance becomes `balance` BTC, a minute passes, and the bot ticks. */
    async payment(tick: () => Promise<unknown>, balance = '1.0012') {
      env.sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num(balance) }]);
      clock.now += MINUTE;
      await tick();
    },
    /** What the channel reads, top-level messages oldest first. */
    said: () => poster.repliesIn(FINANCE).map((m) => m.text),
  };
}
