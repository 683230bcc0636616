import { awaitsPayment } from '../domain/invoice.js';
import type { Change, EndReason } from '../domain/watch.js';
import type { OutgoingEntry } from '../outbox.js';
import {
  CircuitOpenError,
  InvalidApiKeyError,
  type Invoice,
  type InvoiceId,
  InvoiceNotFoundError,
  isPaymentError,
  PacedOutError,
} from '../payments/index.js';
import type { Outcome } from '../pipeline/outcome.js';
import type { Tracked } from '../pipeline/tracked.js';
import { LeaseLost, leaseOf } from '../runner/leases.js';
import type { Ran } from '../scheduler.js';
import { KEY_PROBE_MS } from '../service-state.js';
import { liveInvoiceCard } from '../views/invoice.js';
import { transitionMessage } from '../views/watch.js';
import { nextPollAt } from './cadence.js';
import { liveWatch, type WatchContext } from './context.js';
import type { WatchedInvoiceRow, WatchRow } from './queries.js';
import type { CheckRecord, ClaimedCheck } from './queries-checks.js';
import { changes, fromSnapshot, type InvoiceSnapshot, toSnapshot } from './snapshot.js';
import { PENDING_SETTLE_MS } from './start.js';
import { recordState } from './states-seen.js';

/** What one check came to: the invoice as read (or as last read), and when to check next. */
interface Reading {
  invoice: Invoice;
  diff: readonly Change[];
  /** The snapshot to store: set only when the invoice was read. */
  snapshot?: string;
  /** When the cadence (or the backoff) puts the next check. */
  nextAt: number;
  failures: number;
  /** Since when the invoice could not be read; null when this check read it. */
  failingSince: number | null;
}

/** What a check decided for one watch: whether it ends, and what its card and thread are told. */
interface Decision {
  watch: WatchRow;
  reason: EndReason | undefined;
  entries: OutgoingEntry[];
}

/** A claimed check with the active watches it decides from. */
type Checked = ClaimedCheck & { active: readonly WatchRow[] };

const snapshotOf = (row: WatchedInvoiceRow) => JSON.parse(row.snapshot) as InvoiceSnapshot;
const channelsOf = (watches: readonly WatchRow[]) => watches.map((w) => w.channel_id);

/** What a check came to: changes told and watches ended, or (nothing of either) the record the runner writes. */
interface Recorded {
  diff: number;
  ended: number;
  completion?: CheckRecord;
}

/**
 * A check's record: the reading's snapshot (undefined, left as it was, when the invoice was not
 * read) and when the next check falls due: the cadence's time, or when the first of its watches
 * is due to end if that comes first (the last check happens then, not a cadence step later).
 */
function recordOf(row: WatchedInvoiceRow, reading: Reading, now: number, earliestEnd: number): CheckRecord {
  const { snapshot } = reading;
  return {
    // The stored snapshot stays when the reading is the same text: no copy of it written back.
    ...(snapshot === undefined || snapshot === row.snapshot ? {} : { snapshot }),
    next_poll_at: Math.max(now + 1000, Math.min(reading.nextAt, earliestEnd)),
    failures: reading.failures,
    failing_since: reading.failingSince,
  };
}

/**
 * The background check of a watched invoice: it notices a change, keeps each live card current
 * and tells each thread, exactly once across restarts and instances (the decision and its
 * messages are one transaction; see src/outbox.ts). Its decisions are made from a read of the
 * invoice's watches; the transaction then holds those still active, so a watch a Stop ended in
 * between is neither edited back to live nor told of a change after its "stopped by".
 */
export function watchChecks(ctx: WatchContext, settleStale: (invoiceId: string) => Promise<boolean>) {
  const { deps, queries, graceMs } = ctx;
  /** When the first of the watches going on ends: the invoice's expiry and the grace, or a watch's own end. */
  const earliestEnd = (reading: Reading, going: readonly WatchRow[]) =>
    Math.min(reading.invoice.timeout.getTime() + graceMs, ...going.map((w) => w.ends_at));
  const { store, payments, state, logger, clock, settings } = deps;

  /** Why the watch ends with this reading: its invoice can no longer change, or its time is up. */
  function endOf(w: WatchRow, invoice: Invoice, now: number): EndReason | undefined {
    if (!awaitsPayment(invoice)) return 'final';
    if (now >= invoice.timeout.getTime() + graceMs) return 'expired';
    return now >= w.ends_at ? 'max_days' : undefined;
  }

  function decide(w: WatchRow, reading: Reading, now: number): Decision {
    const { invoice, diff } = reading;
    const reason = endOf(w, invoice, now);
    if (reason) {
      // The change that ended the watch and its end are one reply.
      const unreadSince = reading.failingSince ?? undefined;
      return {
        watch: w,
        reason,
        entries: ctx.endingMessages(w, invoice, reason, now, { unreadSince, changes: diff }),
      };
    }
    if (diff.length === 0) return { watch: w, reason, entries: [] };
    const card = liveInvoiceCard(invoice, { now: new Date(now), watch: liveWatch(w) });
    const entries: OutgoingEntry[] = [
      { channel: w.channel_id, ts: w.card_ts, message: card, watchId: w.id },
      {
        channel: w.channel_id,
        threadTs: w.thread_ts,
        message: transitionMessage(invoice, diff, w.watcher_id, new Date(now)),
        watchId: w.id,
      },
    ];
    return { watch: w, reason, entries };
  }

  /**
   * Records a check, in one transaction with its messages: what changed is told in each
   * watch's thread, and every watch whose time is up ends (its invoice's expiry plus the grace,
   * WATCH_MAX_DAYS) whether or not this check could read the invoice, so a failing service never
   * keeps a watch alive; an end without a fresh reading says since when there was none.
   * LeaseLost when another instance took the check over meanwhile: nothing is recorded.
   */
  async function record(
    row: WatchedInvoiceRow,
    now: number,
    reading: Reading,
    active: readonly WatchRow[],
  ): Promise<Recorded> {
    // Decided, cards rendered, before the transaction; it then writes only for the watches still
    // active, locked until it commits: a Stop committed in between is not undone, a later one waits.
    const decisions = active.map((w) => decide(w, reading, now));
    const quiet = decisions.every((d) => d.reason === undefined && d.entries.length === 0);
    if (decisions.length > 0 && quiet && row.account_replaced !== 1) {
      // Nothing to tell and no watch ends: the record alone, which the runner writes with others'.
      const going = decisions.map((d) => d.watch);
      return { diff: 0, ended: 0, completion: recordOf(row, reading, now, earliestEnd(reading, going)) };
    }
    const result = await store.transaction(async (trx) => {
      const held = await queries.holdActive(
        trx,
        decisions.map((d) => d.watch.id),
      );
      const still = new Set(held.map((w) => w.id));
      const outgoing: OutgoingEntry[] = [];
      let ended = 0;
      /** The watches this check leaves going. */
      const going: WatchRow[] = [];
      for (const { watch, reason, entries } of decisions.filter((d) => still.has(d.watch.id))) {
        if (reason) {
          await queries.end(trx, watch.id, reason, now);
          ended += 1;
        } else {
          going.push(watch);
        }
        outgoing.push(...entries);
      }
      const completed = await queries.complete(
        trx,
        leaseOf(row),
        row.invoice_id,
        recordOf(row, reading, now, earliestEnd(reading, going)),
      );
      if (!completed) throw new LeaseLost();
      if (reading.snapshot !== undefined)
        await ctx.sightings.checked(trx, snapshotOf(row), reading.invoice, channelsOf(held), now);
      if (reading.diff.some((c) => c.field === 'status' || c.field === 'payStatus'))
        await recordState(trx, deps.installation, reading.invoice, now);
      // Read with the key there is now: a later "unknown" is the invoice's own.
      if (reading.snapshot !== undefined && row.account_replaced === 1)
        await queries.readByNewAccount(trx, row.invoice_id);
      await ctx.send(trx, outgoing, now);
      if (ended === held.length) await queries.forgetIfUnwatched(trx, row.invoice_id);
      return { diff: reading.diff.length, ended };
    });
    if (result.diff > 0 || result.ended > 0) deps.wakeOutbox?.();
    if (result.ended > 0 && reading.failingSince !== null) {
      logger.warn(
        {
          invoiceId: row.invoice_id,
          ended: result.ended,
          unreadSince: new Date(reading.failingSince).toISOString(),
        },
        'watch ended on time without a fresh reading: the invoice could not be read',
      );
    }
    return result;
  }

  /** A check that could not read the invoice: nothing to announce, but the end rules still apply. */
  async function unread(
    row: Checked,
    now: number,
    next: { nextAt: number; failures: number; outcome: Outcome },
  ): Promise<Ran<CheckRecord>> {
    const reading = {
      invoice: fromSnapshot(snapshotOf(row)),
      diff: [],
      nextAt: next.nextAt,
      failures: next.failures,
      failingSince: row.failing_since ?? now,
    };
    const result = await record(row, now, reading, row.active);
    const { completion } = result;
    return {
      outcome: result.ended > 0 ? 'ended' : next.outcome,
      invoiceId: row.invoice_id,
      ...(completion ? { completion } : {}),
    };
  }

  /** Ends every watch of an invoice (it no longer exists), each told in its thread. */
  async function endAll(row: WatchedInvoiceRow, reason: EndReason): Promise<Tracked> {
    const now = clock();
    const invoice = fromSnapshot(snapshotOf(row));
    await store.transaction(async (trx) => {
      const watches = await queries.activeOfInvoice(trx, row.invoice_id);
      const outgoing: OutgoingEntry[] = [];
      for (const w of watches) {
        // One a Stop ended meanwhile has been told already.
        if (await queries.end(trx, w.id, reason, now))
          outgoing.push(...ctx.endingMessages(w, invoice, reason, now));
      }
      await ctx.send(trx, outgoing, now);
      await queries.forgetIfUnwatched(trx, row.invoice_id);
    });
    deps.wakeOutbox?.();
    return { outcome: 'ended', invoiceId: row.invoice_id };
  }

  /** The check's reading failed: ended, paused, or backed off, as the failure says. */
  async function failed(row: Checked, now: number, error: unknown): Promise<Ran<CheckRecord>> {
    // Unknown to the account of a key replaced since the last reading: that is why, not that it is gone.
    if (error instanceof InvoiceNotFoundError)
      return endAll(row, row.account_replaced === 1 ? 'account_replaced' : 'not_found');
    if (error instanceof CircuitOpenError || error instanceof PacedOutError) {
      // No call was made: the service is down for everyone, or its key's budget had no turn for
      // it in time (a busy instance); neither says anything of this invoice.
      const nextAt = now + settings.pollSeconds * 1000;
      const outcome = error instanceof PacedOutError ? error.code : 'paused';
      return unread(row, now, { nextAt, failures: row.failures, outcome });
    }
    if (error instanceof InvalidApiKeyError) {
      await state.markKeyRejected(now);
      return unread(row, now, { nextAt: now + KEY_PROBE_MS, failures: row.failures, outcome: 'paused' });
    }
    if (!isPaymentError(error)) throw error;
    const failures = row.failures + 1;
    const nextAt = nextPollAt({
      now,
      due: row.next_poll_at,
      since: row.watched_since,
      timeout: Date.parse(snapshotOf(row).timeout),
      pollSeconds: settings.pollSeconds,
      failures,
    });
    return unread(row, now, { nextAt, failures, outcome: error.code });
  }

  /**
   * The invoice's active watches a check decides from: as read with its claim, unless a watch
   * whose start did not finish is settled first (read again then). Undefined when that settling
   * left the invoice watched by nobody: there is nothing to check.
   */
  async function activeOf(row: ClaimedCheck): Promise<readonly WatchRow[] | undefined> {
    const staleBefore = clock() - PENDING_SETTLE_MS;
    const stale = row.watches.some((w) => w.state === 'pending' && w.started_at <= staleBefore);
    if (!stale) return row.watches.filter((w) => w.state === 'active');
    if (await settleStale(row.invoice_id)) return undefined;
    return queries.activeOfInvoice(store.db, row.invoice_id);
  }

  /**
   * One check of a watched invoice this instance claimed (`watchPollJob`). `keyRejected`: whether
   * the installation's key was marked rejected when it was claimed (unknown: taken as possibly);
   * a reading then clears the mark.
   */
  async function check(
    claimed: ClaimedCheck,
    known: { keyRejected?: boolean } = {},
  ): Promise<Ran<CheckRecord>> {
    const invoiceId = claimed.invoice_id;
    const active = await activeOf(claimed);
    if (!active) return { outcome: 'ended', invoiceId };
    const row = { ...claimed, active };
    const now = clock();
    let invoice: Invoice;
    try {
      // Stored only after it was parsed as an InvoiceId when the watch started.
      invoice = await payments.getInvoice(invoiceId as InvoiceId, { background: true });
    } catch (error) {
      return failed(row, now, error);
    }
    if (known.keyRejected !== false) await state.markKeyAccepted();

    const after = toSnapshot(invoice);
    const snapshot = JSON.stringify(after);
    // Read as stored, to the character: nothing changed, and the stored snapshot is not parsed.
    const diff = snapshot === row.snapshot ? [] : changes(snapshotOf(row), after);
    const cadence = nextPollAt({
      now,
      due: row.next_poll_at,
      since: row.watched_since,
      timeout: invoice.timeout.getTime(),
      pollSeconds: settings.pollSeconds,
      failures: 0,
    });
    const reading = { invoice, diff, snapshot, nextAt: cadence, failures: 0 };
    const result = await record(row, now, { ...reading, failingSince: null }, active);
    const { completion } = result;
    return {
      outcome: result.diff > 0 ? 'changed' : result.ended > 0 ? 'ended' : 'unchanged',
      invoiceId,
      quiet: result.diff === 0 && result.ended === 0,
      ...(completion ? { completion } : {}),
    };
  }

  return { check };
}
