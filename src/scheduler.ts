import { randomUUID } from 'node:crypto';
import type { Logger } from './logger.js';
import type { PaymentsClient } from './payments/index.js';
import { type Tracked, type TrackingDeps, tracked, type Who } from './pipeline/tracked.js';
import type { ServiceState } from './service-state.js';
import type { SlackPoster } from './slack/poster.js';
import type { Store } from './store/database.js';
import { ONE_WORKSPACE } from './store/keys.js';

/**
 * Background work, claimed rather than assumed: each job takes due items from the store with a
 * lease (so several instances never do the same item, and a crashed instance's items are taken
 * over when its lease runs out), runs them, and looks again. The scheduler knows nothing of
 * what the items are.
 */
/** What a service with background jobs (the watches, the feed) works with. */
export interface BackgroundDeps {
  store: Store;
  payments: PaymentsClient;
  poster: SlackPoster;
  state: ServiceState;
  logger: Logger;
  clock: () => number;
  /** Asks the outbox to deliver now rather than at its next tick. */
  wakeOutbox?: () => void;
}

/**
 * A lease: its token, and for how long an item is its holder's alone. The instance's own
 * (`leased`'s argument) names the instance; each claim's is a fresh token of its own, written
 * to the rows it takes, so a second claim of the same item, even by the same instance, never
 * passes the fence of the first.
 */
export interface Lease {
  readonly owner: string;
  readonly ms: number;
}

/** The lease a claimed item runs under: its claim's token, and whether it has been lost since. */
export interface HeldLease extends Lease {
  /** True once a renewal found the item's rows no longer held by the token: its work may write and send nothing more. */
  readonly lost: boolean;
}

/** How long a claimed item is an instance's alone, unless a job says otherwise. */
export const LEASE_MS = 30_000;
/** An installation that cannot be served now (its token revoked, its key rejected) has its work looked at again this much later. */
export const UNSERVED_RETRY_MS = 60_000;

/**
 * What a background job supplies (graphile-worker's `Task`, with its queue's half of the lease):
 * how to claim its due items and give one back, what an item's installation must lend it, and
 * the work. The runner (`leased`) owns the rest: the lease, each installation's share of the
 * slots, and the one policy for an installation that cannot be served now.
 */
export interface Task<T, P> {
  /** For the request log and metrics: `watch_poll`, `outbox`, … */
  readonly name: string;
  /** Items run at once by this instance. */
  readonly concurrency: number;
  /**
   * Claims only once this many of its slots are free: fewer, bigger claims, for a job whose
   * claim costs the store more than its items do. 1 by default.
   */
  readonly claimBatch?: number;
  /** How long to wait before looking again when nothing was due. */
  readonly idleMs: number;
  /**
   * Takes up to `limit` due items, leased by `lease` (its token written to them); `busy` says
   * how many of each installation's items this instance runs now, for claims shared fairly
   * between them.
   */
  claim(now: number, limit: number, lease: Lease, busy: ReadonlyMap<string, number>): Promise<T[]>;
  /**
   * Leases every row still held by one of `tokens` until `now + leaseMs` (`renewing` in
   * store/lease.ts); resolves with the tokens that still hold a row.
   */
  renew(tokens: readonly string[], now: number, leaseMs: number): Promise<ReadonlySet<string>>;
  /** When the next item falls due, if the job can tell: the loop then sleeps until then, not a whole idle tick. */
  nextDueAt?(now: number): Promise<number | undefined>;
  /** When the item was due, for the scheduler's lag. */
  dueAt(item: T): number;
  /** The installation the item belongs to. */
  installationOf(item: T): string;
  /** More of what the item's log line names. */
  describe?(item: T): Who;
  /** What an item given back unworked is logged with beside its outcome (its invoice, say). */
  about?(item: T): Pick<Tracked, 'invoiceId'>;
  /** What the work needs of an installation (its watches, its feed, its bot); undefined while it cannot be served now. */
  serve(installation: string): Promise<P | undefined>;
  /** Gives a claimed item back unworked, due again at `until`, only while `lease` still holds it. */
  postpone(item: T, until: number, lease: Lease): Promise<void>;
  /** The work on a claimed item, with what its installation lent, under its claim's lease. */
  run(item: T, part: P, lease: HeldLease): Promise<Tracked>;
}

export interface Job<T> {
  readonly name: string;
  readonly concurrency: number;
  readonly claimBatch?: number;
  readonly idleMs: number;
  /** Takes up to `limit` due items, leased to this instance. */
  claim(now: number, limit: number): Promise<T[]>;
  nextDueAt?(now: number): Promise<number | undefined>;
  dueAt(item: T): number;
  /** What the item's log line names beside the job: the installation it belongs to. */
  describe?(item: T): Who;
  run(item: T): Promise<Tracked>;
}

/** A claim's lease as its items run: `lost` set by a renewal that finds it gone. */
interface Holding {
  lease: { owner: string; ms: number; lost: boolean };
  /** Its items still running. */
  running: number;
  /** When it was claimed, on the monotonic clock. */
  since: number;
}

/**
 * A claim is renewed for at most this many leases (five minutes of a 30 s lease): work still
 * running then is stuck (a call or a query that never answers), and its lease is let go, so
 * another claim takes the item over instead of it being held for as long as the process lives.
 */
export const MAX_RENEWALS = 10;

/**
 * The leases of a task's running items, each claim's renewed every third of the lease while any
 * of its items runs (one statement a tick for all of them), so work that outlives its lease keeps
 * it, and no second attempt starts while the first still runs.
 */
function holdings<T>(
  task: Pick<Task<T, unknown>, 'name' | 'renew'>,
  lease: Lease,
  clock: () => number,
  logger: Pick<Logger, 'warn'> | undefined,
) {
  const byToken = new Map<string, Holding>();
  const byItem = new Map<T, Holding>();
  let timer: NodeJS.Timeout | undefined;
  let renewing = false;
  async function renew(): Promise<void> {
    if (renewing) return;
    renewing = true;
    const now = performance.now();
    for (const [token, holding] of byToken) {
      if (now - holding.since < lease.ms * MAX_RENEWALS || holding.lease.lost) continue;
      holding.lease.lost = true;
      logger?.warn(
        { job: task.name, runningMs: Math.round(now - holding.since) },
        'work ran far past its lease: let go',
      );
      byToken.delete(token);
    }
    const tokens = [...byToken.keys()];
    if (tokens.length === 0) return;
    try {
      const kept = await task.renew(tokens, clock(), lease.ms);
      for (const token of tokens) {
        const holding = byToken.get(token);
        if (holding && !kept.has(token)) holding.lease.lost = true;
      }
    } catch (error) {
      // The rows' fence still holds: a lease that ran out meanwhile refuses the work's writes.
      logger?.warn({ err: error, job: task.name }, 'could not renew the leases of running work');
    } finally {
      renewing = false;
    }
  }
  return {
    /** A fresh lease for one claim: this instance's name and a token no other claim has. */
    fresh: (): Lease => ({ owner: `${lease.owner}/${randomUUID()}`, ms: lease.ms }),
    /** An item claimed under `claimed` runs from now on: its lease is renewed until it is let go. */
    hold(item: T, claimed: Lease): void {
      const holding = byToken.get(claimed.owner) ?? {
        lease: { ...claimed, lost: false },
        running: 0,
        since: performance.now(),
      };
      holding.running += 1;
      byToken.set(claimed.owner, holding);
      byItem.set(item, holding);
      timer ??= setInterval(() => void renew(), lease.ms / 3).unref();
    },
    of(item: T): HeldLease {
      const holding = byItem.get(item);
      if (!holding) throw new Error(`${task.name}: an item run without being claimed`);
      return holding.lease;
    },
    letGo(item: T): void {
      const holding = byItem.get(item);
      byItem.delete(item);
      if (!holding) return;
      holding.running -= 1;
      if (holding.running === 0) byToken.delete(holding.lease.owner);
      if (byToken.size === 0 && timer) {
        clearInterval(timer);
        timer = undefined;
      }
    },
  };
}

/**
 * A task run under this instance's lease: each claim under a token of its own (this instance's
 * name and a random part), renewed while its items run; each installation's items counted while
 * they run (so claims share slots between installations), and an item whose installation cannot
 * be served now given back for UNSERVED_RETRY_MS, without a call, whatever the job.
 */
export function leased<T, P>(
  task: Task<T, P>,
  lease: Lease,
  clock: () => number,
  logger?: Pick<Logger, 'warn'>,
): Job<T> {
  const busy = new Map<string, number>();
  const held = holdings(task, lease, clock, logger);
  const { nextDueAt } = task;
  const release = (installation: string) => {
    const left = (busy.get(installation) ?? 1) - 1;
    if (left > 0) busy.set(installation, left);
    else busy.delete(installation);
  };
  return {
    name: task.name,
    concurrency: task.concurrency,
    ...(task.claimBatch === undefined ? {} : { claimBatch: task.claimBatch }),
    idleMs: task.idleMs,
    dueAt: (item) => task.dueAt(item),
    ...(nextDueAt ? { nextDueAt: (now: number) => nextDueAt.call(task, now) } : {}),
    // The one workspace is named by none.
    describe: (item) => {
      const installation = task.installationOf(item);
      return { ...(installation === ONE_WORKSPACE ? {} : { installation }), ...task.describe?.(item) };
    },
    async claim(now, limit) {
      const claimed = held.fresh();
      const items = await task.claim(now, limit, claimed, busy);
      for (const item of items) {
        const installation = task.installationOf(item);
        busy.set(installation, (busy.get(installation) ?? 0) + 1);
        held.hold(item, claimed);
      }
      return items;
    },
    async run(item) {
      const installation = task.installationOf(item);
      try {
        const itsLease = held.of(item);
        const part = await task.serve(installation);
        if (part !== undefined) return await task.run(item, part, itsLease);
        await task.postpone(item, clock() + UNSERVED_RETRY_MS, itsLease);
        return { outcome: 'paused', ...task.about?.(item) };
      } finally {
        release(installation);
        held.letGo(item);
      }
    },
  };
}

interface SchedulerDeps extends TrackingDeps {
  clock: () => number;
  /** Told how late each item started: `now - dueAt`. */
  onLag?: (job: string, lagMs: number) => void;
  /** After a failed claim (the database unreachable, say), wait this long before trying again. */
  claimRetryMs?: number;
}

export interface Scheduler {
  start(): void;
  /** Look for due work now instead of at the next idle tick (e.g. a watch was just started). */
  wake(job?: string): void;
  /** Claims nothing more; resolves once the loops have ended (items running still finish, in flight). */
  stop(): Promise<void>;
}

export function createScheduler(deps: SchedulerDeps, jobs: readonly Job<unknown>[]): Scheduler {
  let stopping = false;
  /** The sleeping loops' alarms, by job. */
  const wakers = new Map<string, () => void>();
  /** Jobs woken while not asleep (claiming, say): their next sleep is skipped, so no wake is lost. */
  const woken = new Set<string>();
  const loops: Promise<void>[] = [];

  function wakeJob(name: string): void {
    const waker = wakers.get(name);
    if (waker) waker();
    else woken.add(name);
  }

  /** How long to sleep: until the next item is due, at most the job's idle tick. */
  async function untilNextDue<T>(job: Job<T>): Promise<number> {
    if (!job.nextDueAt) return job.idleMs;
    try {
      const now = deps.clock();
      const next = await job.nextDueAt(now);
      return next === undefined ? job.idleMs : Math.min(job.idleMs, Math.max(0, next - now));
    } catch {
      return job.idleMs;
    }
  }

  async function loop<T>(job: Job<T>): Promise<void> {
    let running = 0;
    const run = tracked(
      deps,
      'job',
      job.name,
      (item: T) => job.describe?.(item) ?? {},
      (item: T) => job.run(item),
    );
    const batch = Math.min(job.claimBatch ?? 1, job.concurrency);
    while (!stopping) {
      let claimed = 0;
      const free = job.concurrency - running;
      const claiming = free >= batch;
      if (claiming) {
        try {
          const now = deps.clock();
          const items = await job.claim(now, free);
          claimed = items.length;
          for (const item of items) {
            deps.onLag?.(job.name, Math.max(0, now - job.dueAt(item)));
            running += 1;
            void run(item).finally(() => {
              running -= 1;
              wakeJob(job.name);
            });
          }
        } catch (error) {
          deps.logger.error({ err: error, job: job.name }, 'could not claim background work');
          await pause(job.name, deps.claimRetryMs ?? 5_000);
          continue;
        }
      }
      // A full batch means more may be due: look again at once (or, with too few slots free, when
      // one frees up: a finishing item wakes the loop).
      if (claimed > 0 && claimed === free) continue;
      const wait = claiming ? await untilNextDue(job) : job.idleMs;
      // Work due now that could not be claimed (background paused: the payment service's breaker
      // open, or its key rejected) is looked for again after a tick, not at once in a spin.
      await pause(job.name, claimed === 0 && wait === 0 ? job.idleMs : wait);
    }
  }

  /** Sleeps `ms`, or less if woken; not at all when woken meanwhile or stopping (a stop never waits out a sleep). */
  function pause(name: string, ms: number): Promise<void> {
    if (stopping || woken.delete(name)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        wakers.delete(name);
        resolve();
      };
      const timer = setTimeout(done, ms);
      wakers.set(name, done);
    });
  }

  return {
    start() {
      for (const job of jobs) loops.push(loop(job));
    },
    wake(name) {
      for (const job of jobs) if (name === undefined || name === job.name) wakeJob(job.name);
    },
    async stop() {
      stopping = true;
      for (const wake of wakers.values()) wake();
      await Promise.all(loops);
    },
  };
}
