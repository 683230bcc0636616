import type { Tracked } from '../pipeline/tracked.js';
import { type Job, ofInstallation } from '../scheduler.js';
import type { ServiceState } from '../service-state.js';
import type { Store } from '../store/database.js';
import { paceInterval } from '../store/pace.js';
import { stepBackGuard } from '../store/schedules.js';
import { CEILING_MS } from './cadence.js';
import { type WatchedInvoiceRow, watchQueries } from './queries.js';

/** What the poll job needs of an installation's watches: one check of an invoice it claimed. */
export interface WatchChecker {
  check(row: WatchedInvoiceRow): Promise<Tracked>;
}

export interface WatchPollDeps {
  store: Store;
  /** This instance's name in leases. */
  owner: string;
  leaseMs?: number;
  /** Whether background work may claim now, and how much (the breaker; a rejected key). */
  gate: Pick<ServiceState, 'claimWithin'>;
  /**
   * Each key's background calls per second, all instances together (PAYMENT_API_BACKGROUND_RPS),
   * when its client keeps it in the store (src/store/pace.ts): claims take only the checks a key
   * can start soon. Unset with one workspace, whose budget is each instance's own.
   */
  perSecond?: number;
  /** The watches of an installation, to check its invoice with its key; undefined when it cannot be served now. */
  watchesOf: (installation: string) => Promise<WatchChecker | undefined>;
  clock: () => number;
  /** WATCH_POLL_SECONDS: with the cadence's ceiling, how far ahead a check is ever scheduled. */
  pollSeconds: number;
}

/** The checks an instance runs at once, all installations together. */
export const WATCH_CHECKS_AT_ONCE = 48;

/**
 * With one workspace: one key, whose budget is this instance's own. Its checks wait for their
 * turn after being claimed, so more at once would only wait longer on their leases.
 */
const ONE_KEY_CHECKS_AT_ONCE = 16;

/** An installation that cannot be served (its token revoked, say) is looked at again this much later. */
const UNSERVED_RETRY_MS = 60_000;

/**
 * The background check of every watched invoice, of every installation: claimed fairly across
 * installations (`claimDue`), each checked by its own installation's watches.
 */
export function watchPollJob(deps: WatchPollDeps): Job<WatchedInvoiceRow> {
  const queries = watchQueries(deps.store);
  // The cadence's longest step, or a minute's wait (an unserved installation, a rejected key).
  const maxAheadMs = Math.max(deps.pollSeconds * 1000, CEILING_MS) + UNSERVED_RETRY_MS;
  const steppedBack = stepBackGuard(deps.store, {
    table: 'watched_invoices',
    column: 'next_poll_at',
    maxAheadMs,
  });
  const leaseMs = deps.leaseMs ?? 30_000;
  const paceMs = deps.perSecond === undefined ? undefined : paceInterval(deps.perSecond);
  const concurrency = paceMs === undefined ? ONE_KEY_CHECKS_AT_ONCE : WATCH_CHECKS_AT_ONCE;
  /** Checks claimed and not yet finished here, by installation. */
  const busy = new Map<string, number>();
  const settle = (installation: string) => {
    const left = (busy.get(installation) ?? 1) - 1;
    if (left > 0) busy.set(installation, left);
    else busy.delete(installation);
  };
  return {
    name: 'watch_poll',
    // A claim reads every installation's due checks: claimed by the half, not one at a time.
    concurrency,
    claimBatch: concurrency / 2,
    idleMs: 1000,
    dueAt: (row) => row.next_poll_at,
    nextDueAt: (now) => queries.nextDueAt(now),
    async claim(now, limit) {
      await steppedBack(now);
      const rows = await deps.gate.claimWithin(now, limit, (allowed) =>
        queries.claimDue(deps.owner, now, allowed, leaseMs, busy, paceMs),
      );
      for (const row of rows) busy.set(row.installation_id, (busy.get(row.installation_id) ?? 0) + 1);
      return rows;
    },
    describe: ofInstallation,
    async run(row) {
      try {
        const watches = await deps.watchesOf(row.installation_id);
        if (watches) return await watches.check(row);
        await queries.postpone(deps.owner, row, deps.clock() + UNSERVED_RETRY_MS);
        return { outcome: 'paused', invoiceId: row.invoice_id };
      } finally {
        settle(row.installation_id);
      }
    },
  };
}
