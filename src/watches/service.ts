import type { EndReason } from '../domain/watch.js';
import type { OutboxRow } from '../outbox.js';
import type { Invoice, InvoiceId } from '../payments/index.js';
import type { SlackPostError } from '../slack/calls.js';
import type { WatchListItem } from '../views/watch.js';
import { watchChecks } from './checks.js';
import { QUIET, type WatchDeps, watchContext } from './context.js';
import type { ListedWatch, WatchRow } from './queries.js';
import type { InvoiceSnapshot } from './snapshot.js';
import { watchStarts } from './start.js';
import { statesSeen } from './states-seen.js';

export type { WatchDeps, WatchSettings } from './context.js';
export { WATCH_CHECKS_AT_ONCE, watchPollJob } from './poll-job.js';
export type { StartRequest } from './start.js';

type StopResult = { kind: 'stopped'; title: string } | { kind: 'not_watched' };

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
 * One installation's background check alone (`watchPollJob`), as the poll job uses it for each
 * claim: what a check needs and no more. Settling a start that did not finish is rare, so what
 * starts are made of is made only then.
 */
export function watchChecker(deps: WatchDeps) {
  const ctx = watchContext(deps);
  return watchChecks(ctx, (invoiceId) => watchStarts(ctx).settleStale(invoiceId));
}

/**
 * Watching invoices: starting (src/watches/start.ts) and stopping watches, and the background
 * check (src/watches/checks.ts) that notices a change, keeps each live card current and tells
 * each thread, exactly once across restarts and instances.
 */
export function createWatches(deps: WatchDeps) {
  const { store, logger, clock } = deps;
  const ctx = watchContext(deps);
  const { queries } = ctx;
  const { start, settleStale } = watchStarts(ctx);
  const { check } = watchChecks(ctx, settleStale);

  /**
   * Ends one watch in a transaction, with its messages unless `quiet`. A pending one has no card
   * yet: its start tells the card once it is posted.
   */
  async function endWatch(w: WatchRow, reason: EndReason, by?: string): Promise<boolean> {
    const now = clock();
    const ended = await store.transaction(async (trx) => {
      const invoice = await ctx.lastSeen(trx, w.invoice_id);
      if (!(await queries.end(trx, w.id, reason, now))) return false;
      if (invoice && !QUIET.has(reason) && w.card_ts !== '')
        await ctx.send(trx, ctx.endingMessages(w, invoice, reason, now, { by }), now);
      await queries.forgetIfUnwatched(trx, w.invoice_id);
      return true;
    });
    if (ended) deps.wakeOutbox?.();
    return ended;
  }

  return {
    queries,

    start,

    /** Whether a Watch button on the invoice can start a watch (`mayChange`): offered only then. */
    watchable: (invoice: Pick<Invoice, 'status' | 'payStatus' | 'timeout'>): boolean =>
      ctx.mayChange(invoice, clock()),

    /** Stops a watch, active or still pending (its card being posted). */
    async stop(watchId: string, byUserId: string): Promise<StopResult> {
      const w = await queries.byId(watchId);
      if (!w || w.state === 'ended') return { kind: 'not_watched' };
      const title = (await ctx.lastSeen(store.db, w.invoice_id))?.title ?? w.invoice_id;
      return (await endWatch(w, 'stopped', byUserId)) ? { kind: 'stopped', title } : { kind: 'not_watched' };
    },

    async stopInvoice(channelId: string, invoiceId: InvoiceId, byUserId: string): Promise<StopResult> {
      const w = await queries.current(channelId, invoiceId);
      return w ? this.stop(w.id, byUserId) : { kind: 'not_watched' };
    },

    /**
     * A lookup read the invoice, and `channelId` saw its answer (undefined: only the person who
     * asked did, or no conversation, as for a workflow step: not a sighting): an invoice seen paid
     * there first is named in that channel's feed posts and digest. A failure to record it
     * is logged; the lookup's answer goes out all the same.
     */
    async lookedUp(channelId: string | undefined, invoice: Invoice): Promise<void> {
      if (channelId === undefined) return;
      try {
        await ctx.sightings.lookedUp(store, invoice, channelId, clock());
      } catch (error) {
        logger.warn({ err: error, invoiceId: invoice.id }, 'an invoice lookup was not recorded');
      }
    },

    /** The channel's active watches, oldest first. */
    async list(channelId: string): Promise<WatchListItem[]> {
      return (await queries.listInChannel(channelId)).map(listItem);
    },

    /** Every watch of the invoice in this installation, oldest first: its side panel's list. */
    ofInvoice: (invoiceId: string) => queries.ofInvoice(invoiceId),

    /** The states the invoice was seen in by this installation's watches, oldest first. */
    statesSeen: (invoiceId: string) => statesSeen(store.db, deps.installation, invoiceId),

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
  };
}

export type Watches = ReturnType<typeof createWatches>;

/** An installation's check, as the poll job's claims use it. */
export type InstallationChecker = ReturnType<typeof watchChecker>;
