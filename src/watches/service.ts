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
import type { Outcome } from '../pipeline/outcome.js';
import type { Tracked } from '../pipeline/tracked.js';
import { type BackgroundDeps, type Job, ofInstallation } from '../scheduler.js';
import { KEY_PROBE_MS, type ServiceState } from '../service-state.js';
import { SlackPostError } from '../slack/calls.js';
import type { Store } from '../store/database.js';
import { LeaseLost } from '../store/lease.js';
import { paceInterval } from '../store/pace.js';
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
import { type Change, changes, fromSnapshot, type InvoiceSnapshot, toSnapshot } from './snapshot.js';

export interface WatchSettings {
  pollSeconds: number;
  graceMinutes: number;
  maxDays: number;
  limitPerChannel: number;
}

export interface WatchDeps extends BackgroundDeps {
  settings: WatchSettings;
  /** The installation whose watches these are: '' (the default) for the one workspace. */
  installation?: string;
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
  const installation = deps.installation ?? '';
  const queries = watchQueries(store, installation);
  const graceMs = settings.graceMinutes * 60_000;
  const send = (trx: Kysely<Tables>, entries: readonly OutgoingEntry[], now: number) =>
    enqueue(trx, entries, now, installation);

  const liveWatch = (w: Pick<WatchRow, 'id' | 'watcher_id' | 'started_at'>) => ({
    id: w.id,
    watcherId: w.watcher_id,
    startedAt: new Date(w.started_at),
  });
  /** The card update and the thread notice that end a watch. */
  function endingMessages(
    w: WatchRow,
    invoice: Invoice,
    reason: EndReason,
    now: number,
    opts: { by?: string | undefined; unreadSince?: number | undefined } = {},
  ): OutgoingEntry[] {
    const text = endReasonText(reason, {
      by: opts.by,
      graceMinutes: settings.graceMinutes,
      maxDays: settings.maxDays,
      unreadSince: opts.unreadSince === undefined ? undefined : new Date(opts.unreadSince),
    });
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
    const snapshot = await queries.lastSnapshot(trx, invoiceId);
    return snapshot ? fromSnapshot(JSON.parse(snapshot) as InvoiceSnapshot) : undefined;
  }

  /** Ends one watch in a transaction, with its messages unless `quiet`. */
  async function endWatch(w: WatchRow, reason: EndReason, by?: string): Promise<boolean> {
    const now = clock();
    const ended = await store.transaction(async (trx) => {
      const invoice = await lastSeen(trx, w.invoice_id);
      if (!(await queries.end(trx, w.id, reason, now))) return false;
      if (invoice && !QUIET.has(reason))
        await send(trx, endingMessages(w, invoice, reason, now, { by }), now);
      await queries.forgetIfUnwatched(trx, w.invoice_id);
      return true;
    });
    if (ended) deps.wakeOutbox?.();
    return ended;
  }

  /**
   * Records a check, in one transaction with its messages: what changed is told in each
   * watch's thread, and every watch whose time is up ends (its invoice's expiry plus the grace,
   * WATCH_MAX_DAYS) whether or not this check could read the invoice, so a failing service never
   * keeps a watch alive; an end without a fresh reading says since when there was none.
   * Undefined when another instance took the check over meanwhile: nothing is recorded.
   */
  async function record(
    row: WatchedInvoiceRow,
    now: number,
    reading: Reading,
  ): Promise<{ diff: number; ended: number } | undefined> {
    const { invoice, diff } = reading;
    const graceEnd = invoice.timeout.getTime() + graceMs;
    const unreadSince = reading.failingSince ?? undefined;
    const result = await store
      .transaction(async (trx) => {
        const watches = await queries.activeOfInvoice(trx, row.invoice_id);
        const outgoing: OutgoingEntry[] = [];
        let ended = 0;
        let earliestEnd = graceEnd;
        for (const w of watches) {
          const reason: EndReason | undefined =
            now >= graceEnd ? 'expired' : now >= w.ends_at ? 'max_days' : undefined;
          if (diff.length > 0) {
            if (!reason) {
              const card = liveInvoiceCard(invoice, { now: new Date(now), watch: liveWatch(w) });
              outgoing.push({ channel: w.channel_id, ts: w.card_ts, message: card, watchId: w.id });
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
            outgoing.push(...endingMessages(w, invoice, reason, now, { unreadSince }));
            ended += 1;
          } else {
            earliestEnd = Math.min(earliestEnd, w.ends_at);
          }
        }
        // The last check happens when the watch is due to end, not a cadence step later.
        const completed = await queries.complete(trx, owner, row.invoice_id, {
          ...(reading.snapshot === undefined ? {} : { snapshot: reading.snapshot }),
          next_poll_at: Math.max(now + 1000, Math.min(reading.nextAt, earliestEnd)),
          failures: reading.failures,
          failing_since: reading.failingSince,
        });
        if (!completed) throw new LeaseLost();
        await send(trx, outgoing, now);
        if (ended === watches.length) await queries.forgetIfUnwatched(trx, row.invoice_id);
        return { diff: diff.length, ended };
      })
      .catch((error: unknown) => {
        if (error instanceof LeaseLost) return undefined;
        throw error;
      });
    if (!result) return undefined;
    if (result.diff > 0 || result.ended > 0) deps.wakeOutbox?.();
    if (result.ended > 0 && unreadSince !== undefined) {
      logger.warn(
        { invoiceId: row.invoice_id, ended: result.ended, unreadSince: new Date(unreadSince).toISOString() },
        'watch ended on time without a fresh reading: the invoice could not be read',
      );
    }
    return result;
  }

  /** A check that could not read the invoice: nothing to announce, but the end rules still apply. */
  async function unread(
    row: WatchedInvoiceRow,
    now: number,
    next: { nextAt: number; failures: number; outcome: Outcome },
  ): Promise<Tracked> {
    const result = await record(row, now, {
      invoice: fromSnapshot(JSON.parse(row.snapshot) as InvoiceSnapshot),
      diff: [],
      nextAt: next.nextAt,
      failures: next.failures,
      failingSince: row.failing_since ?? now,
    });
    if (!result) return { outcome: 'lease_lost', invoiceId: row.invoice_id };
    return { outcome: result.ended > 0 ? 'ended' : next.outcome, invoiceId: row.invoice_id };
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
        const nextAt = now + settings.pollSeconds * 1000;
        return unread(row, now, { nextAt, failures: row.failures, outcome: 'paused' });
      }
      if (error instanceof InvalidApiKeyError) {
        await state.markKeyRejected(now);
        return unread(row, now, { nextAt: now + KEY_PROBE_MS, failures: row.failures, outcome: 'paused' });
      }
      if (!isPaymentError(error)) throw error;
      const failures = row.failures + 1;
      const timeout = Date.parse((JSON.parse(row.snapshot) as InvoiceSnapshot).timeout);
      const nextAt = nextPollAt({
        now,
        due: row.next_poll_at,
        since: row.watched_since,
        timeout,
        pollSeconds: settings.pollSeconds,
        failures,
      });
      return unread(row, now, { nextAt, failures, outcome: error.code });
    }
    await state.markKeyAccepted();

    const after = toSnapshot(invoice);
    const diff = changes(JSON.parse(row.snapshot) as InvoiceSnapshot, after);
    const cadence = nextPollAt({
      now,
      due: row.next_poll_at,
      since: row.watched_since,
      timeout: invoice.timeout.getTime(),
      pollSeconds: settings.pollSeconds,
      failures: 0,
    });
    const result = await record(row, now, {
      invoice,
      diff,
      snapshot: JSON.stringify(after),
      nextAt: cadence,
      failures: 0,
      failingSince: null,
    });
    if (!result) return { outcome: 'lease_lost', invoiceId };
    return {
      outcome: result.diff > 0 ? 'changed' : result.ended > 0 ? 'ended' : 'unchanged',
      invoiceId,
      quiet: result.diff === 0 && result.ended === 0,
    };
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
      await send(trx, outgoing, now);
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
      const watch: Omit<WatchRow, 'installation_id'> = {
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

    /** One check of a watched invoice this instance claimed (`watchPollJob`). */
    check,

    /** The poll job when these are the only watches (one workspace). */
    pollJob(): Job<WatchedInvoiceRow> {
      const watches = { check };
      return watchPollJob({ ...deps, gate: state, watchesOf: async () => watches });
    },
  };
}

export type Watches = ReturnType<typeof createWatches>;

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
  watchesOf: (installation: string) => Promise<Pick<Watches, 'check'> | undefined>;
  clock: () => number;
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
