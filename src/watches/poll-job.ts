import { leaseQueue } from '../runner/leases.js';
import { type Ran, type Task, UNSERVED_RETRY_MS } from '../scheduler.js';
import type { ServiceState } from '../service-state.js';
import type { Store } from '../store/database.js';
import type { InstallationId } from '../store/keys.js';
import { paceInterval } from '../store/pace.js';
import { pruneEnded } from '../store/retention.js';
import { stepBackGuard } from '../store/schedules.js';
import { CEILING_MS } from './cadence.js';
import { CHECKS, type CheckRecord, type ClaimedCheck, checkClaims } from './queries-checks.js';

/**
 * What the poll job needs of an installation's watches: one check of an invoice it claimed, with
 * the record of a check that changed nothing left to the runner (`completion`).
 */
export interface WatchChecker {
  check(row: ClaimedCheck): Promise<Ran<CheckRecord>>;
}

interface WatchPollDeps {
  store: Store;
  /** Whether background work may claim now, and how much (the breaker; a rejected key). */
  gate: Pick<ServiceState, 'claimWithin'>;
  /**
   * Each key's background calls per second, all instances together (PAYMENT_API_BACKGROUND_RPS),
   * when its client keeps it in the store (src/store/pace.ts): claims take only the checks a key
   * can start soon. Unset with one workspace, whose budget is each instance's own.
   */
  perSecond?: number;
  /** The watches of each installation of a claim, to check its invoices with its key; one missing cannot be served now. */
  watchesOf: (installations: readonly InstallationId[]) => Promise<ReadonlyMap<InstallationId, WatchChecker>>;
  /** WATCH_POLL_SECONDS: with the cadence's ceiling, how far ahead a check is ever scheduled. */
  pollSeconds: number;
  /** ENDED_RETENTION_DAYS: ended watches are deleted this long after they ended. */
  endedRetentionDays: number;
}

/**
 * After a claim that did not fill every slot, the next comes this much later (`Task.claimGapMs`):
 * a check starts at most this late, and each claim's statements serve twice as many checks as
 * at 250 ms (docs/benchmarks.md).
 */
const CLAIM_GAP_MS = 500;

/** The checks an instance runs at once, all installations together. */
export const WATCH_CHECKS_AT_ONCE = 48;

/**
 * With one workspace: one key, whose budget is this instance's own. Its checks wait for their
 * turn after being claimed, so more at once would only wait longer on their leases.
 */
const ONE_KEY_CHECKS_AT_ONCE = 16;

/**
 * The background check of every watched invoice, of every installation: claimed fairly across
 * installations (`claimDue`), each checked by its own installation's watches.
 */
export function watchPollJob(deps: WatchPollDeps): Task<ClaimedCheck, WatchChecker, CheckRecord> {
  const queries = checkClaims(deps.store);
  // The cadence's longest step, or a minute's wait (an unserved installation, a rejected key).
  const maxAheadMs = Math.max(deps.pollSeconds * 1000, CEILING_MS) + UNSERVED_RETRY_MS;
  const steppedBack = stepBackGuard(deps.store, {
    table: 'watched_invoices',
    column: 'next_poll_at',
    maxAheadMs,
  });
  const prune = pruneEnded(deps.store, 'watches', deps.endedRetentionDays);
  const paceMs = deps.perSecond === undefined ? undefined : paceInterval(deps.perSecond);
  const concurrency = paceMs === undefined ? ONE_KEY_CHECKS_AT_ONCE : WATCH_CHECKS_AT_ONCE;
  return {
    name: 'watch_poll',
    // A claim reads every installation's due checks: claimed by the half, not one at a time.
    concurrency,
    claimBatch: concurrency / 2,
    // Checks fall due all the time: claimed twice a second, each claim with what fell due.
    claimGapMs: CLAIM_GAP_MS,
    idleMs: 1000,
    dueAt: (row) => row.next_poll_at,
    nextDueAt: (now) => queries.nextDueAt(now),
    async claim(now, limit, lease, busy) {
      await steppedBack(now);
      await prune(now);
      const rows = await deps.gate.claimWithin(now, limit, (allowed) =>
        queries.claimDue(lease.owner, now, allowed, lease.ms, busy, paceMs),
      );
      // What every check decides from, read with the claim: one statement, not one a check.
      return queries.withWatches(rows);
    },
    queue: leaseQueue(deps.store, CHECKS),
    installationOf: (row) => row.installation_id,
    about: (row) => ({ invoiceId: row.invoice_id }),
    serve: deps.watchesOf,
    run: (row, watches) => watches.check(row),
    complete: (done) =>
      queries.completeMany(
        done.map(({ item, lease, values }) => ({ row: item, owner: lease.owner, values })),
      ),
  };
}
