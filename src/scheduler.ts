import type { Logger } from './logger.js';
import type { PaymentsClient } from './payments/index.js';
import { type Tracked, type TrackingDeps, tracked, type Who } from './pipeline/tracked.js';
import { holdings } from './runner/holdings.js';
import { LeaseLost, type LeaseQueue } from './runner/leases.js';
import type { ServiceState } from './service-state.js';
import type { SlackPoster } from './slack/poster.js';
import { coalesce } from './store/coalesce.js';
import type { Store } from './store/database.js';
import { type InstallationId, ONE_WORKSPACE } from './store/keys.js';

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

/** What work on a claimed item came to; with `completion`, the runner records it (`Task.complete`) with other items' in one statement. */
export type Ran<C> = Tracked & { completion?: C };

/** An item's completion as the runner hands it to `Task.complete`: the item, its claim's lease, what to record. */
export interface Completion<T, C> {
  item: T;
  lease: Lease;
  values: C;
}

/** How long a completion waits for others to share its statement, at most, while other items of the job still run. */
const COMPLETE_WINDOW_MS = 25;
/** The most completions one statement records. */
const COMPLETE_MAX = 200;

/**
 * What a background job supplies (graphile-worker's `Task`): its name, what it claims (its
 * choice of due rows, leased through runner/leases.ts), its leases (`queue`), what an item's
 * installation must lend it, and the work. The runner (`leased`) owns the rest: the lease's
 * token and renewal, each installation's share of the slots, the one policy for an
 * installation that cannot be served now (its items given back through the queue), the one
 * handling of a lost lease, and the record of completions.
 */
export type Task<T, P, C = never> = TaskBase<T, P, C> & Serving<P>;

/**
 * What the work needs of each installation of a claim (its watches, its feed, its bot), asked once
 * for the whole claim (`serve`: an installation missing from the map cannot be served now), or of
 * each installation on its own (`serveEach`: undefined, or a failure, which the runner logs, and
 * the installation cannot be served now; the others are).
 */
type Serving<P> =
  | {
      serve(installations: readonly InstallationId[]): Promise<ReadonlyMap<InstallationId, P>>;
      serveEach?: never;
    }
  | { serveEach(installation: InstallationId): Promise<P | undefined>; serve?: never };

interface TaskBase<T, P, C> {
  /** For the request log and metrics: `watch_poll`, `outbox`, … */
  readonly name: string;
  /** Items run at once by this instance. */
  readonly concurrency: number;
  /**
   * Claims only once this many of its slots are free: fewer, bigger claims, for a job whose
   * claim costs the store more than its items do. 1 by default.
   */
  readonly claimBatch?: number;
  /**
   * For a job whose items fall due one after another all the time (the watch checks): after a
   * claim that took fewer than it had room for, the next comes this much later, with everything
   * that fell due meanwhile, rather than one claim (and its statements) for every item that ends.
   */
  readonly claimGapMs?: number;
  /** How long to wait before looking again when nothing was due. */
  readonly idleMs: number;
  /**
   * Takes up to `limit` due items, leased by `lease` (its token written to them); `busy` says
   * how many of each installation's items this instance runs now, for claims shared fairly
   * between them.
   */
  claim(now: number, limit: number, lease: Lease, busy: ReadonlyMap<InstallationId, number>): Promise<T[]>;
  /**
   * The claimed items' leases in the store (`leaseQueue` in runner/leases.ts): renewed while
   * they run, an item given back through it.
   */
  readonly queue: LeaseQueue<T>;
  /** When the next item falls due, if the job can tell: the loop then sleeps until then, not a whole idle tick. */
  nextDueAt?(now: number): Promise<number | undefined>;
  /** When the item was due, for the scheduler's lag. */
  dueAt(item: T): number;
  /** The installation the item belongs to. */
  installationOf(item: T): InstallationId;
  /** More of what the item's log line names. */
  describe?(item: T): Who;
  /** What an item given back unworked is logged with beside its outcome (its invoice, say). */
  about?(item: T): Pick<Tracked, 'invoiceId'>;
  /**
   * The work on a claimed item, with what its installation lent, under its claim's lease. Work
   * that has nothing to write but its item's completion returns it (`completion`), for `complete`.
   */
  run(item: T, part: P, lease: HeldLease): Promise<Ran<C>>;
  /**
   * Records many items' completions in one statement, each only while its claim's token
   * (`lease.owner`) still holds it; resolves, in order, whether each was recorded (false: its
   * lease was lost, nothing written).
   */
  complete?(done: readonly Completion<T, C>[]): Promise<readonly boolean[]>;
}

export interface Job<T> {
  readonly name: string;
  readonly concurrency: number;
  readonly claimBatch?: number;
  readonly claimGapMs?: number;
  readonly idleMs: number;
  /** Takes up to `limit` due items, leased to this instance. */
  claim(now: number, limit: number): Promise<T[]>;
  nextDueAt?(now: number): Promise<number | undefined>;
  dueAt(item: T): number;
  /** What the item's log line names beside the job: the installation it belongs to. */
  describe?(item: T): Who;
  run(item: T): Promise<Tracked>;
}

/**
 * A task run under this instance's lease: each claim under a token of its own (this instance's
 * name and a random part), renewed while its items run; each installation's items counted while
 * they run (so claims share slots between installations), and an item whose installation cannot
 * be served now given back for UNSERVED_RETRY_MS, without a call, whatever the job.
 */
export function leased<T, P, C = never>(
  task: Task<T, P, C>,
  lease: Lease,
  clock: () => number,
  logger?: Pick<Logger, 'warn'>,
): Job<T> {
  const busy = new Map<InstallationId, number>();
  const held = holdings(
    { name: task.name, renew: (tokens, now, ms) => task.queue.renew(tokens, now, ms) },
    lease,
    clock,
    logger,
  );
  /** What each claimed item's installation lent it, asked once per claim. */
  const served = new Map<T, P | undefined>();
  let running = 0;
  const { complete } = task;
  // Completions wait for each other while other items still run, so one statement records many.
  const completing =
    complete &&
    coalesce<Completion<T, C>, boolean>({
      flush: (done) => complete.call(task, done),
      windowMs: COMPLETE_WINDOW_MS,
      max: COMPLETE_MAX,
      ready: (waiting) => waiting >= running,
    });
  /** Work's outcome, once its completion (if it returned one) is recorded: lease_lost if it could not be. */
  async function recorded(item: T, lease: Lease, ran: Ran<C>): Promise<Tracked> {
    const { completion, ...result } = ran;
    if (completion === undefined) return result;
    if (!completing) throw new Error(`${task.name}: work returned a completion the task cannot record`);
    return (await completing({ item, lease, values: completion }))
      ? result
      : { ...result, outcome: 'lease_lost' };
  }
  const { nextDueAt } = task;
  /** What the claim's installations lend: asked of each at once when the task serves one at a time. */
  const serve = async (installations: readonly InstallationId[]): Promise<ReadonlyMap<InstallationId, P>> => {
    if (task.serve) return task.serve(installations);
    const { serveEach } = task;
    const parts = new Map<InstallationId, P>();
    await Promise.all(
      installations.map(async (installation) => {
        try {
          const part = await serveEach(installation);
          if (part !== undefined) parts.set(installation, part);
        } catch (error) {
          logger?.warn(
            { err: error, job: task.name, installation },
            'could not serve an installation of claimed work: its items are given back',
          );
        }
      }),
    );
    return parts;
  };
  const release = (installation: InstallationId) => {
    const left = (busy.get(installation) ?? 1) - 1;
    if (left > 0) busy.set(installation, left);
    else busy.delete(installation);
  };
  return {
    name: task.name,
    concurrency: task.concurrency,
    ...(task.claimBatch === undefined ? {} : { claimBatch: task.claimBatch }),
    ...(task.claimGapMs === undefined ? {} : { claimGapMs: task.claimGapMs }),
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
      if (items.length === 0) return items;
      try {
        const parts = await serve([...new Set(items.map((item) => task.installationOf(item)))]);
        for (const item of items) served.set(item, parts.get(task.installationOf(item)));
      } catch (error) {
        // Served by nobody: each item is given back unworked, as for an installation that cannot be served now.
        logger?.warn({ err: error, job: task.name }, 'could not serve the installations of claimed work');
      }
      return items;
    },
    async run(item) {
      const installation = task.installationOf(item);
      const part = served.get(item);
      served.delete(item);
      running += 1;
      try {
        const itsLease = held.of(item);
        if (part !== undefined) return await recorded(item, itsLease, await task.run(item, part, itsLease));
        await task.queue.giveBack(item, itsLease.owner, clock() + UNSERVED_RETRY_MS);
        return { outcome: 'paused', ...task.about?.(item) };
      } catch (error) {
        // A write fenced by a lease lost meanwhile: rolled back, nothing sent; another claim has it.
        if (error instanceof LeaseLost) return { outcome: 'lease_lost', ...task.about?.(item) };
        throw error;
      } finally {
        running -= 1;
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
    /** The loop waits for slots to free up (too few for a claim): a finishing item wakes it. */
    let starved = false;
    while (!stopping) {
      let claimed = 0;
      const free = job.concurrency - running;
      const claiming = free >= batch;
      starved = !claiming;
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
              // With a claim gap, claims come at its pace, not at every item's end.
              if (job.claimGapMs === undefined || starved) wakeJob(job.name);
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
      // After a partial claim, a job with a claim gap looks again once the gap has passed (what
      // fell due meanwhile comes in one claim), without asking when the next item is due.
      const gap = claimed > 0 ? job.claimGapMs : undefined;
      const wait = gap ?? (claiming ? await untilNextDue(job) : job.idleMs);
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
