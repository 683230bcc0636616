import { feedJobs } from '../../src/feed/jobs.js';
import type { Feed, FeedDeps } from '../../src/feed/service.js';
import { type OutboxRow, outboxJob } from '../../src/outbox.js';
import type { Tracked } from '../../src/pipeline/tracked.js';
import { type Job, LEASE_MS, leased, type Task } from '../../src/scheduler.js';
import type { InstallationId } from '../../src/store/keys.js';
import type { WatchChecker } from '../../src/watches/poll-job.js';
import { type WatchDeps, type Watches, watchPollJob } from '../../src/watches/service.js';

/** Any job, as far as running its due items goes (Job<T> itself is invariant in T). */
interface DueWork {
  claim(now: number, limit: number): Promise<unknown[]>;
  run(item: never): Promise<Tracked>;
}

/**
 * What the scheduler does at one moment, minus the timers: runs every piece of work the jobs
 * have due at `now`, then delivers everything the outbox holds. Resolves with what each came to.
 */
export async function runDue(
  jobs: readonly DueWork[],
  outbox: Job<OutboxRow>,
  now: number,
  limit = 100,
): Promise<Tracked[]> {
  const results: Tracked[] = [];
  for (const job of jobs)
    for (const row of await job.claim(now, limit)) results.push(await job.run(row as never));
  for (let batch = await outbox.claim(now, limit); batch.length > 0; batch = await outbox.claim(now, limit)) {
    for (const row of batch) results.push(await outbox.run(row));
  }
  return results;
}

/** A test's lease: this instance's name and, when a test lets leases run out, their length. */
export interface Leasing {
  owner: string;
  clock: () => number;
  leaseMs?: number;
  /** ENDED_RETENTION_DAYS; its default otherwise. */
  endedRetentionDays?: number;
}

/** ENDED_RETENTION_DAYS's default (src/config.ts). */
export const RETENTION_DAYS = 30;

/** A task under the test instance's lease, as the scheduler runs it (`leased`). */
const under = <T, P, C>(task: Task<T, P, C>, deps: Leasing) =>
  leased(task, { owner: deps.owner, ms: deps.leaseMs ?? LEASE_MS }, deps.clock);

/** A job's `serve` lending every installation of a claim the same part. */
export const servingAll =
  <P>(part: P) =>
  async (installations: readonly InstallationId[]): Promise<ReadonlyMap<InstallationId, P>> =>
    new Map(installations.map((id) => [id, part]));

/** A job's `serve` that can serve no installation now. */
export const servingNone = async (): Promise<ReadonlyMap<InstallationId, never>> =>
  new Map<InstallationId, never>();

/** The watch poll job as the assembly builds it (src/app.ts), serving only these watches. */
export const watchJob = (deps: WatchDeps & Leasing, watches: Pick<Watches, 'check'>) =>
  under(
    watchPollJob({
      store: deps.store,
      pollSeconds: deps.settings.pollSeconds,
      endedRetentionDays: deps.endedRetentionDays ?? RETENTION_DAYS,
      gate: deps.state,
      watchesOf: servingAll(watches),
    }),
    deps,
  );

/** The feed's poll and digest jobs as the assembly builds them (src/app.ts), serving only this feed. */
export function feedJobsOf(deps: FeedDeps & Leasing, feed: Pick<Feed, 'poll' | 'digest'>) {
  const jobs = feedJobs({
    ...deps,
    endedRetentionDays: deps.endedRetentionDays ?? RETENTION_DAYS,
    gate: deps.state,
    feedOf: async () => feed,
    digestsOf: async () => feed,
  });
  return { poll: under(jobs.poll, deps), digest: under(jobs.digest, deps) };
}

/** The outbox as the assembly builds it, under the test instance's lease. */
export const outboxOf = (deps: Parameters<typeof outboxJob>[0] & Leasing) => under(outboxJob(deps), deps);

/** What the watch poll job asks of a claim's installations (`backgroundParts(…).checkersOf`). */
interface Checkers {
  checkersOf(ids: readonly InstallationId[]): Promise<ReadonlyMap<InstallationId, WatchChecker>>;
}

/** An installation's watches as the poll job is given them: a claim of that installation alone. */
export const watchesOf = async (parts: Checkers, id: InstallationId): Promise<WatchChecker | undefined> =>
  (await parts.checkersOf([id])).get(id);

/** `parts` with `watchesOf(id)`, for tests that ask one installation at a time. */
export const withWatchesOf = <T extends Checkers>(parts: T) =>
  Object.assign(parts, { watchesOf: (id: InstallationId) => watchesOf(parts, id) });
