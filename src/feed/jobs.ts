import type { Tracked } from '../pipeline/tracked.js';
import { type Job, ofInstallation } from '../scheduler.js';
import { KEY_PROBE_MS, type ServiceState } from '../service-state.js';
import type { Store } from '../store/database.js';
import { stepBackGuard } from '../store/schedules.js';
import { feedQueries, type PollRow, type SubscriptionRow } from './queries.js';

/** What one installation's feed does with a claimed poll or digest (`createFeed`). */
export interface InstallationFeed {
  poll(row: PollRow): Promise<Tracked>;
  digest(sub: SubscriptionRow): Promise<Tracked>;
}

export interface FeedJobsDeps {
  store: Store;
  /** This instance's name in leases. */
  owner: string;
  leaseMs?: number;
  /** BALANCE_POLL_SECONDS: how far ahead a poll is ever scheduled. */
  pollSeconds: number;
  /** Whether background work may call the service now, and how much (the breaker; a rejected key). */
  gate: Pick<ServiceState, 'claimWithin'>;
  /**
   * An installation's feed, to do its work with its key and token; undefined while it cannot be
   * served (its token revoked, its account disconnected): its work stays leased until the lease
   * runs out, and is claimed again then.
   */
  feedOf: (installation: string) => Promise<InstallationFeed | undefined>;
}

/**
 * The feed's two jobs, across installations: every due balance poll and every due digest of
 * every installation, claimed by this instance and done by the installation's own feed.
 */
export function feedJobs(deps: FeedJobsDeps): { poll: Job<PollRow>; digest: Job<SubscriptionRow> } {
  const queries = feedQueries(deps.store);
  const leaseMs = deps.leaseMs ?? 30_000;
  // A poll is next due one interval on, or a minute on (a rejected key), never further.
  const steppedBack = stepBackGuard(deps.store, {
    table: 'singletons',
    column: 'next_run_at',
    maxAheadMs: Math.max(deps.pollSeconds * 1000, KEY_PROBE_MS) + KEY_PROBE_MS,
  });
  const served =
    <T extends { installation_id: string }>(work: (feed: InstallationFeed, row: T) => Promise<Tracked>) =>
    async (row: T): Promise<Tracked> => {
      const feed = await deps.feedOf(row.installation_id);
      return feed ? work(feed, row) : { outcome: 'paused' };
    };
  return {
    poll: {
      name: 'feed_poll',
      concurrency: 2,
      idleMs: 1000,
      dueAt: (row) => row.next_run_at,
      nextDueAt: (now) => queries.nextPollDueAt(now),
      async claim(now, limit) {
        await steppedBack(now);
        return deps.gate.claimWithin(now, limit, (allowed) =>
          queries.claimPolls(deps.owner, now, allowed, leaseMs),
        );
      },
      describe: ofInstallation,
      run: served((feed, row) => feed.poll(row)),
    },
    digest: {
      name: 'feed_digest',
      concurrency: 2,
      idleMs: 30_000,
      dueAt: (sub) => sub.next_digest_at,
      nextDueAt: (now) => queries.nextDigestDueAt(now),
      claim: (now, limit) => queries.claimDigests(deps.owner, now, limit, leaseMs),
      describe: ofInstallation,
      run: served((feed, sub) => feed.digest(sub)),
    },
  };
}
