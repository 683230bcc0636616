import { beforeEach, expect } from 'vitest';
import type { PaymentsClient } from '../../src/payments/index.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { serviceState } from '../../src/service-state.js';
import { SlackPostError } from '../../src/slack/calls.js';
import type { Store } from '../../src/store/database.js';
import { type InstallationId, ONE_WORKSPACE } from '../../src/store/keys.js';
import {
  createWatches,
  type StartRequest,
  type WatchDeps,
  type WatchSettings,
} from '../../src/watches/service.js';
import { captureLogs, type DepsOptions, HOME_TEAM, TEST_WATCH_SETTINGS } from './bolt.js';
import { emptyWork } from './empty-store.js';
import { NOW } from './factories.js';
import type { RecordingPoster } from './fake-slack.js';
import { type Leasing, outboxOf, runDue, watchJob } from './jobs.js';
import { useSandbox } from './use-sandbox.js';

export interface WatchInstanceOptions {
  /** The instance's name, which owns its leases: another name is another instance, or a restart. */
  name?: string;
  /** The installation whose watches these are; the one workspace's by default. */
  installation?: InstallationId;
  settings?: Partial<WatchSettings>;
  wakeOutbox?: () => void;
  /** How the payment client is built (its deadline, …). */
  payments?: DepsOptions;
  /** The payment client itself, when the test builds its own. */
  client?: PaymentsClient;
  /** The store as this instance sees it; the shared one by default. */
  store?: Store;
}

/**
 * What the watch tests share: one sandbox payment service and store per file, and for each test
 * a fresh fake Slack, a clock at NOW the test moves, and a store emptied of the bot's work.
 * `instance` builds one bot instance over them, as far as watches go (its watches, its poll job
 * and its outbox, as src/app.ts assembles them); several share the store and the fake Slack.
 */
export function useWatchWorld() {
  const env = useSandbox();
  const clock = { now: NOW.getTime() };
  beforeEach(async () => {
    clock.now = NOW.getTime();
    await emptyWork(env.store);
    env.sandbox.reset();
  });

  function instance(opts: WatchInstanceOptions = {}) {
    const name = opts.name ?? 'a';
    const poster = env.poster;
    const logs = captureLogs();
    const state = serviceState(env.store, logs.logger, { installation: ONE_WORKSPACE });
    const deps: WatchDeps & Leasing = {
      store: opts.store ?? env.store,
      payments: opts.client ?? env.deps(opts.payments).payments,
      poster,
      state,
      logger: logs.logger,
      clock: () => clock.now,
      settings: { ...TEST_WATCH_SETTINGS, ...opts.settings },
      owner: name,
      wakeOutbox: opts.wakeOutbox,
      installation: opts.installation ?? ONE_WORKSPACE,
    };
    const watches = createWatches(deps);
    const outbox = outboxOf({
      store: env.store,
      posterOf: async () => poster,
      logger: logs.logger,
      clock: () => clock.now,
      owner: name,
      onUndeliverable: (row, error) => watches.undeliverable(row, error),
    });
    const poll = watchJob(deps, watches);
    /** Runs every due check, then delivers every message, as the scheduler would. */
    const tick = () => runDue([poll], outbox, clock.now);
    return { watches, deps, outbox, poll, tick, logs, state };
  }

  return {
    env,
    clock,
    /** This test's fake Slack. */
    get poster(): RecordingPoster {
      return env.poster;
    },
    instance,
  };
}

/**
 * The next card post goes to Slack (when `lands`), and its answer never comes back: `hang`, or
 * a time-out (a SlackPostError with no answer from Slack).
 */
export function loseNextAnswer(
  poster: RecordingPoster,
  { lands, hang = false }: { lands: boolean; hang?: boolean },
) {
  const post = poster.post;
  poster.post = async (message) => {
    poster.post = post;
    if (lands) await post(message);
    else poster.calls.push(`post ${message.channel} (lost on the way)`);
    if (hang) return new Promise<string>(() => undefined);
    throw new SlackPostError('transient', undefined);
  };
}

/**
 * Resolves once a card's post into `channel` (any channel when none is named) was attempted:
 * what a start that hangs on its post (`loseNextAnswer` with `hang`) has written by then is in
 * the store, however slow the machine.
 */
export const untilPosted = (poster: RecordingPoster, channel = '') =>
  expect.poll(() => poster.calls.some((c) => c.startsWith(`post ${channel}`))).toBe(true);

/** A start of the watch of the demo's open invoice in C0SUPPORT by U0WATCHER, or as `overrides` say. */
export const watchRequest = (overrides: Partial<StartRequest> = {}): StartRequest => ({
  teamId: HOME_TEAM,
  channelId: 'C0SUPPORT',
  userId: 'U0WATCHER',
  invoiceId: DEMO_INVOICE_IDS.open,
  ...overrides,
});
