import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { enqueue, type OutboxRow, type OutgoingEntry } from '../outbox.js';
import {
  CircuitOpenError,
  InvalidApiKeyError,
  type Invoice,
  type InvoiceId,
  InvoiceNotFoundError,
  isPaymentError,
} from '../payments/index.js';
import type { Tracked } from '../pipeline/tracked.js';
import type { BackgroundDeps, Job } from '../scheduler.js';
import { KEY_PROBE_MS } from '../service-state.js';
import { SlackPostError } from '../slack/poster.js';
import type { Tables } from '../store/schema.js';
import { liveInvoiceCard } from '../views/invoice.js';
import {
  type EndReason,
  endReasonText,
  transitionMessage,
  type WatchListItem,
  watchEndedMessage,
} from '../views/watch.js';
import { nextPollAt } from './cadence.js';
import { type ListedWatch, type WatchedInvoiceRow, type WatchRow, watchQueries } from './queries.js';
import { changes, fromSnapshot, type InvoiceSnapshot, toSnapshot } from './snapshot.js';

export interface WatchSettings {
  pollSeconds: number;
  graceMinutes: number;
  maxDays: number;
  limitPerChannel: number;
}

export interface WatchDeps extends BackgroundDeps {
  settings: WatchSettings;
}

export interface StartRequest {
  teamId: string;
  channelId: string;
  userId: string;
  invoiceId: InvoiceId;
  /** Post the live card as a reply in this thread (the card whose Watch button was clicked). */
  threadTs?: string | undefined;
}

export type StartResult =
  | { kind: 'started'; invoice: Invoice; inThread: boolean }
  | { kind: 'already'; invoice: Invoice; since: Date }
  | { kind: 'limit'; limit: number }
  | { kind: 'expired'; invoice: Invoice }
  | { kind: 'not_in_channel' };

export type StopResult = { kind: 'stopped'; title: string } | { kind: 'not_watched' };

/** Reasons that end a watch without a word in its thread: the bot could not post there anyway. */
const QUIET: ReadonlySet<EndReason> = new Set(['card_deleted', 'not_in_channel']);

class LeaseLost extends Error {}

function listItem(w: ListedWatch): WatchListItem {
  const seen = w.snapshot ? (JSON.parse(w.snapshot) as InvoiceSnapshot) : undefined;
  return {
    id: w.id,
    invoiceId: w.invoice_id,
    title: seen?.title,
    status: seen?.status,
    payStatus: seen?.payStatus,
    watcherId: w.watcher_id,
    startedAt: new Date(w.started_at),
  };
}

/**
 * Watching invoices: starting and stopping watches, and the background check that notices a
 * change, keeps each live card current and tells each thread, exactly once across restarts and
 * instances (the decision and its messages are one transaction; see src/outbox.ts).
 */
export function createWatches(deps: WatchDeps) {
  const { store, payments, poster, state, logger, clock, settings, owner } = deps;
  const leaseMs = deps.leaseMs ?? 30_000;
  const queries = watchQueries(store);
  const graceMs = settings.graceMinutes * 60_000;

  const liveWatch = (w: WatchRow) => ({
    id: w.id,
    watcherId: w.watcher_id,
    startedAt: new Date(w.started_at),
  });
  const reasonText = (reason: EndReason, by?: string) =>
    endReasonText(reason, { by, graceMinutes: settings.graceMinutes, maxDays: settings.maxDays });

  /** The card update and the thread notice that end a watch. */
  function endingMessages(
    w: WatchRow,
    invoice: Invoice,
    reason: EndReason,
    now: number,
    by?: string,
  ): OutgoingEntry[] {
    const text = reasonText(reason, by);
    const card = liveInvoiceCard(invoice, {
      now: new Date(now),
      watch: { ...liveWatch(w), ended: { at: new Date(now), reason: text } },
    });
    const entries: OutgoingEntry[] = [{ channel: w.channel_id, ts: w.card_ts, message: card, watchId: w.id }];
    if (!QUIET.has(reason)) {
      entries.push({
        channel: w.channel_id,
        threadTs: w.thread_ts,
        message: watchEndedMessage(invoice, text, w.watcher_id),
        watchId: w.id,
      });
    }
    return entries;
  }

  async function lastSeen(trx: Kysely<Tables>, invoiceId: string): Promise<Invoice | undefined> {
    const row = await trx
      .selectFrom('watched_invoices')
      .select('snapshot')
      .where('invoice_id', '=', invoiceId)
      .executeTakeFirst();
    return row ? fromSnapshot(JSON.parse(row.snapshot) as InvoiceSnapshot) : undefined;
  }

  /** Ends one watch in a transaction, with its messages unless `quiet`. */
  async function endWatch(w: WatchRow, reason: EndReason, by?: string): Promise<boolean> {
    const now = clock();
    const ended = await store.transaction(async (trx) => {
      const invoice = await lastSeen(trx, w.invoice_id);
      if (!(await queries.end(trx, w.id, reason, now))) return false;
      if (invoice && !QUIET.has(reason)) await enqueue(trx, endingMessages(w, invoice, reason, now, by), now);
      await queries.forgetIfUnwatched(trx, w.invoice_id);
      return true;
    });
    if (ended) deps.wakeOutbox?.();
    return ended;
  }

  /** Settles a check that could not read the invoice: backs off, never posts. */
  async function release(row: WatchedInvoiceRow, nextAt: number, failures: number): Promise<void> {
    await store.transaction((trx) =>
      queries.complete(trx, owner, row.invoice_id, { next_poll_at: nextAt, failures }),
    );
  }

  async function check(row: WatchedInvoiceRow): Promise<Tracked> {
    const now = clock();
    const invoiceId = row.invoice_id;
    let invoice: Invoice;
    try {
      // Stored only after it was parsed as an InvoiceId when the watch started.
      invoice = await payments.getInvoice(invoiceId as InvoiceId, { background: true });
    } catch (error) {
      if (error instanceof InvoiceNotFoundError) return endAll(row, 'not_found');
      if (error instanceof CircuitOpenError) {
        // No call was made: the service is down for everyone, which says nothing of this invoice.
        await release(row, now + settings.pollSeconds * 1000, row.failures);
        return { outcome: 'paused', invoiceId };
      }
      if (error instanceof InvalidApiKeyError) {
        await state.markKeyRejected(now);
        await release(row, now + KEY_PROBE_MS, row.failures);
        return { outcome: 'paused', invoiceId };
      }
      if (!isPaymentError(error)) throw error;
      const failures = row.failures + 1;
      const before = JSON.parse(row.snapshot) as InvoiceSnapshot;
      const timeout = Date.parse(before.timeout);
      await release(
        row,
        nextPollAt({ now, since: row.watched_since, timeout, pollSeconds: settings.pollSeconds, failures }),
        failures,
      );
      return { outcome: error.code, invoiceId };
    }
    await state.markKeyAccepted();

    const before = JSON.parse(row.snapshot) as InvoiceSnapshot;
    const after = toSnapshot(invoice);
    const diff = changes(before, after);
    const graceEnd = invoice.timeout.getTime() + graceMs;
    try {
      const result = await store.transaction(async (trx) => {
        const watches = await queries.activeOfInvoice(trx, invoiceId);
        const outgoing: OutgoingEntry[] = [];
        let ended = 0;
        let earliestEnd = graceEnd;
        for (const w of watches) {
          const reason: EndReason | undefined =
            now >= graceEnd ? 'expired' : now >= w.ends_at ? 'max_days' : undefined;
          if (diff.length > 0) {
            if (!reason) {
              const card = liveInvoiceCard(invoice, { now: new Date(now), watch: liveWatch(w) });
              outgoing.push({
                channel: w.channel_id,
                ts: w.card_ts,
                message: card,
                watchId: w.id,
              });
            }
            outgoing.push({
              channel: w.channel_id,
              threadTs: w.thread_ts,
              message: transitionMessage(invoice, diff, w.watcher_id, new Date(now)),
              watchId: w.id,
            });
          }
          if (reason) {
            await queries.end(trx, w.id, reason, now);
            outgoing.push(...endingMessages(w, invoice, reason, now));
            ended += 1;
          } else {
            earliestEnd = Math.min(earliestEnd, w.ends_at);
          }
        }
        const cadence = nextPollAt({
          now,
          since: row.watched_since,
          timeout: invoice.timeout.getTime(),
          pollSeconds: settings.pollSeconds,
          failures: 0,
        });
        // The last check happens when the watch is due to end, not a cadence step later.
        const nextAt = Math.max(now + 1000, Math.min(cadence, earliestEnd));
        const completed = await queries.complete(trx, owner, invoiceId, {
          snapshot: JSON.stringify(after),
          next_poll_at: nextAt,
          failures: 0,
        });
        if (!completed) throw new LeaseLost();
        await enqueue(trx, outgoing, now);
        if (ended === watches.length) await queries.forgetIfUnwatched(trx, invoiceId);
        return { diff: diff.length, ended };
      });
      if (result.diff > 0 || result.ended > 0) deps.wakeOutbox?.();
      return {
        outcome: result.diff > 0 ? 'changed' : result.ended > 0 ? 'ended' : 'unchanged',
        invoiceId,
        quiet: result.diff === 0 && result.ended === 0,
      };
    } catch (error) {
      if (error instanceof LeaseLost) return { outcome: 'lease_lost', invoiceId };
      throw error;
    }
  }

  /** Ends every watch of an invoice (it no longer exists), each told in its thread. */
  async function endAll(row: WatchedInvoiceRow, reason: EndReason): Promise<Tracked> {
    const now = clock();
    const invoice = fromSnapshot(JSON.parse(row.snapshot) as InvoiceSnapshot);
    await store.transaction(async (trx) => {
      const watches = await queries.activeOfInvoice(trx, row.invoice_id);
      const outgoing: OutgoingEntry[] = [];
      for (const w of watches) {
        await queries.end(trx, w.id, reason, now);
        outgoing.push(...endingMessages(w, invoice, reason, now));
      }
      await enqueue(trx, outgoing, now);
      await queries.forgetIfUnwatched(trx, row.invoice_id);
    });
    deps.wakeOutbox?.();
    return { outcome: 'ended', invoiceId: row.invoice_id };
  }

  return {
    queries,

    async start(req: StartRequest): Promise<StartResult> {
      const existing = await queries.active(req.channelId, req.invoiceId);
      if (existing) {
        const invoice = await payments.getInvoice(req.invoiceId);
        return { kind: 'already', invoice, since: new Date(existing.started_at) };
      }
      if ((await queries.countActive(req.channelId)) >= settings.limitPerChannel) {
        return { kind: 'limit', limit: settings.limitPerChannel };
      }
      const invoice = await payments.getInvoice(req.invoiceId);
      const now = clock();
      // Past its expiry and the grace, a watch would end at its first check: there is nothing to watch.
      if (now >= invoice.timeout.getTime() + graceMs) return { kind: 'expired', invoice };
      const watch: WatchRow = {
        id: randomUUID(),
        team_id: req.teamId,
        channel_id: req.channelId,
        invoice_id: req.invoiceId,
        watcher_id: req.userId,
        card_ts: '',
        thread_ts: '',
        state: 'active',
        started_at: now,
        ends_at: now + settings.maxDays * 86_400_000,
        ended_at: null,
        end_reason: null,
      };
      const card = liveInvoiceCard(invoice, { now: new Date(now), watch: liveWatch(watch) });
      let cardTs: string;
      try {
        cardTs = await poster.post({ channel: req.channelId, threadTs: req.threadTs, ...card });
      } catch (error) {
        if (error instanceof SlackPostError && error.failure === 'not_in_channel')
          return { kind: 'not_in_channel' };
        throw error;
      }
      // The reading just made is the first check: the next one follows the cadence.
      const nextAt = nextPollAt({
        now,
        since: now,
        timeout: invoice.timeout.getTime(),
        pollSeconds: settings.pollSeconds,
        failures: 0,
      });
      try {
        await store.transaction((trx) =>
          queries.insert(
            trx,
            { ...watch, card_ts: cardTs, thread_ts: req.threadTs ?? cardTs },
            JSON.stringify(toSnapshot(invoice)),
            nextAt,
          ),
        );
      } catch (error) {
        // Someone started the same watch a moment earlier: theirs stands, this card goes.
        const raced = await queries.active(req.channelId, req.invoiceId);
        if (!raced) throw error;
        await poster.remove({ channel: req.channelId, ts: cardTs }).catch(() => undefined);
        return { kind: 'already', invoice, since: new Date(raced.started_at) };
      }
      return { kind: 'started', invoice, inThread: req.threadTs !== undefined };
    },

    async stop(watchId: string, byUserId: string): Promise<StopResult> {
      const w = await queries.byId(watchId);
      if (w?.state !== 'active') return { kind: 'not_watched' };
      const title = (await lastSeen(store.db, w.invoice_id))?.title ?? w.invoice_id;
      return (await endWatch(w, 'stopped', byUserId)) ? { kind: 'stopped', title } : { kind: 'not_watched' };
    },

    async stopInvoice(channelId: string, invoiceId: InvoiceId, byUserId: string): Promise<StopResult> {
      const w = await queries.active(channelId, invoiceId);
      return w ? this.stop(w.id, byUserId) : { kind: 'not_watched' };
    },

    /** The channel's active watches, oldest first. */
    async list(channelId: string): Promise<WatchListItem[]> {
      return (await queries.listInChannel(channelId)).map(listItem);
    },

    /** The active watches a person started, wherever they are, for their App Home. */
    async startedBy(teamId: string, userId: string): Promise<(WatchListItem & { channelId: string })[]> {
      return (await queries.listStartedBy(teamId, userId)).map((w) => ({
        ...listItem(w),
        channelId: w.channel_id,
      }));
    },

    /** A message that can never be delivered ends its watch quietly (deleted card, channel closed to the bot). */
    async undeliverable(row: OutboxRow, error: SlackPostError): Promise<void> {
      if (!row.watch_id) return;
      const reason: EndReason | undefined =
        error.failure === 'message_not_found'
          ? 'card_deleted'
          : error.failure === 'not_in_channel'
            ? 'not_in_channel'
            : undefined;
      const w = reason ? await queries.byId(row.watch_id) : undefined;
      if (w && reason && (await endWatch(w, reason)))
        logger.info({ watch: w.id, reason }, 'watch ended: Slack will not take its messages');
    },

    pollJob(): Job<WatchedInvoiceRow> {
      return {
        name: 'watch_poll',
        concurrency: 8,
        idleMs: 1000,
        dueAt: (row) => row.next_poll_at,
        nextDueAt: (now) => queries.nextDueAt(now),
        claim: (now, limit) =>
          state.claimWithin(now, limit, (allowed) => queries.claimDue(owner, now, allowed, leaseMs)),
        run: check,
      };
    },
  };
}

export type Watches = ReturnType<typeof createWatches>;
