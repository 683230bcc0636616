import type { Tracked } from '../pipeline/tracked.js';
import { leaseQueue } from '../runner/leases.js';
import { type Task, UNSERVED_RETRY_MS } from '../scheduler.js';
import { KEY_PROBE_MS, type ServiceState } from '../service-state.js';
import type { Store } from '../store/database.js';
import type { InstallationId } from '../store/keys.js';
import { pruneEnded } from '../store/retention.js';
import { stepBackGuard } from '../store/schedules.js';
import { DIGESTS, feedClaims, POLLS, type PollRow, type SubscriptionRow } from './queries.js';

/** What one installation's feed does with a claimed poll or digest (`createFeed`). */
export interface InstallationFeed {
  poll(row: PollRow): Promise<Tracked>;
  digest(sub: SubscriptionRow): Promise<Tracked>;
}

interface FeedJobsDeps {
  store: Store;
  /** BALANCE_POLL_SECONDS: how far ahead a poll is ever scheduled. */
  pollSeconds: number;
  /** ENDED_RETENTION_DAYS: ended feeds are deleted this long after they ended. */
  endedRetentionDays: number;
  /** Whether background work may call the service now, and how much (the breaker; a rejected key). */
  gate: Pick<ServiceState, 'claimWithin'>;
  /** An installation's feed, to read its balance with its key; undefined while it cannot be served now. */
  feedOf: (installation: InstallationId) => Promise<InstallationFeed | undefined>;
  /** An installation's feed, for its digests (no call to the service); undefined while it cannot be served now. */
  digestsOf: (installation: InstallationId) => Promise<InstallationFeed | undefined>;
}

/**
 * The feed's two jobs, across installations: every due balance poll and every due digest of
 * every installation, claimed by this instance and done by the installation's own feed.
 */
export function feedJobs(deps: FeedJobsDeps): {
  poll: Task<PollRow, InstallationFeed>;
  digest: Task<SubscriptionRow, InstallationFeed>;
} {
  const queries = feedClaims(deps.store);
  // A poll is next due one interval on, or a minute on (a rejected key, an unserved installation), never further.
  const steppedBack = stepBackGuard(deps.store, {
    table: 'singletons',
    column: 'next_run_at',
    maxAheadMs: Math.max(deps.pollSeconds * 1000, KEY_PROBE_MS, UNSERVED_RETRY_MS) + KEY_PROBE_MS,
  });
  const prune = pruneEnded(deps.store, 'feed_subscriptions', deps.endedRetentionDays);
  const ofInstallation = <T extends { installation_id: InstallationId }>(row: T) => row.installation_id;
  return {
    poll: {
      name: 'feed_poll',
      concurrency: 2,
      idleMs: 1000,
      dueAt: (row) => row.next_run_at,
      nextDueAt: (now) => queries.nextPollDueAt(now),
      async claim(now, limit, lease) {
        await steppedBack(now);
        return deps.gate.claimWithin(now, limit, (allowed) =>
          queries.claimPolls(lease.owner, now, allowed, lease.ms),
        );
      },
      queue: leaseQueue(deps.store, POLLS),
      installationOf: ofInstallation,
      serveEach: deps.feedOf,
      run: (row, feed) => feed.poll(row),
    },
    digest: {
      name: 'feed_digest',
      concurrency: 2,
      idleMs: 30_000,
      dueAt: (sub) => sub.next_digest_at,
      nextDueAt: (now) => queries.nextDigestDueAt(now),
      async claim(now, limit, lease) {
        await prune(now);
        return queries.claimDigests(lease.owner, now, limit, lease.ms);
      },
      queue: leaseQueue(deps.store, DIGESTS),
      installationOf: ofInstallation,
      serveEach: deps.digestsOf,
      run: (sub, feed) => feed.digest(sub),
    },
  };
}
