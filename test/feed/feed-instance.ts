import type { AccessPolicy } from '../../src/access.js';
import { createFeed, type FeedDeps } from '../../src/feed/service.js';
import type { DropReason } from '../../src/outbox.js';
import type { PaymentsClient } from '../../src/payments/index.js';
import { serviceState } from '../../src/service-state.js';
import { ONE_WORKSPACE } from '../../src/store/keys.js';
import { captureLogs } from '../support/bolt.js';
import type { RecordingPoster } from '../support/fake-slack.js';
import { feedJobsOf, type Leasing, outboxOf, runDue } from '../support/jobs.js';
import type { useSandbox } from '../support/use-sandbox.js';

export interface InstanceOptions {
  pollSeconds?: number;
  payments?: PaymentsClient;
  wakeOutbox?: () => void;
  leaseMs?: number;
  /** Told of each message the outbox drops, as the metrics are. */
  onDropped?: (reason: DropReason) => void;
}

/**
 * One instance of the one workspace's bot, as far as the feed goes: its feed over the sandbox
 * and `poster`, its outbox asking the feed before each message, and a clock the test moves.
 */
export function feedInstance(
  env: ReturnType<typeof useSandbox>,
  name: string,
  poster: RecordingPoster,
  clock: { now: number },
  policy: Pick<AccessPolicy, 'allowedChannels'> = {},
  opts: InstanceOptions = {},
) {
  const logs = captureLogs();
  const state = serviceState(env.store, logs.logger, { installation: ONE_WORKSPACE });
  const deps: FeedDeps & Leasing = {
    installation: ONE_WORKSPACE,
    store: env.store,
    payments: opts.payments ?? env.deps().payments,
    poster,
    state,
    logger: logs.logger,
    clock: () => clock.now,
    owner: name,
    pollSeconds: opts.pollSeconds ?? 60,
    policy,
    ...(opts.wakeOutbox ? { wakeOutbox: opts.wakeOutbox } : {}),
    ...(opts.leaseMs ? { leaseMs: opts.leaseMs } : {}),
  };
  const feed = createFeed(deps);
  const outbox = outboxOf({
    store: env.store,
    posterOf: async () => poster,
    logger: logs.logger,
    clock: () => clock.now,
    owner: name,
    mayDeliver: (row) => feed.mayDeliver(row),
    ...(opts.onDropped ? { onDropped: opts.onDropped } : {}),
  });
  const { poll, digest } = feedJobsOf(deps, feed);
  const jobs = [poll, digest];
  /** Runs every due poll and digest, then delivers every message, as the scheduler would. */
  const tick = () => runDue(jobs, outbox, clock.now, 10);
  return { feed, deps, tick, logs, state, outbox };
}
