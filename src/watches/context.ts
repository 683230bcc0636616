import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import { awaitsPayment } from '../domain/invoice.js';
import type { Change, EndReason } from '../domain/watch.js';
import { enqueue, type OutgoingEntry } from '../outbox.js';
import type { Invoice } from '../payments/index.js';
import type { BackgroundDeps } from '../scheduler.js';
import type { InstallationId } from '../store/keys.js';
import type { Tables } from '../store/schema.js';
import { liveInvoiceCard } from '../views/invoice.js';
import { endReasonText, transitionMessage, watchEndedMessage } from '../views/watch.js';
import { invoiceSightings } from './invoices-seen.js';
import { type WatchRow, watchQueries } from './queries.js';
import { fromSnapshot, type InvoiceSnapshot } from './snapshot.js';

/** WATCH_POLL_SECONDS, WATCH_GRACE_MINUTES, WATCH_MAX_DAYS, WATCH_LIMIT_PER_CHANNEL, as read. */
export type WatchSettings = Config['watches'];

export interface WatchDeps extends BackgroundDeps {
  settings: WatchSettings;
  /** The installation whose watches these are: ONE_WORKSPACE for the one workspace. */
  installation: InstallationId;
}

/** Reasons that end a watch without a word in its thread: the bot could not post there anyway. */
export const QUIET: ReadonlySet<EndReason> = new Set(['card_deleted', 'not_in_channel']);

/** A watch as its live card shows it. */
export const liveWatch = (w: Pick<WatchRow, 'id' | 'watcher_id' | 'started_at'>) => ({
  id: w.id,
  watcherId: w.watcher_id,
  startedAt: new Date(w.started_at),
});

/**
 * What starting, checking and stopping watches share: the installation's queries, its outbox,
 * and the messages that end a watch.
 */
export function watchContext<D extends Pick<WatchDeps, 'store' | 'settings' | 'installation'>>(deps: D) {
  const { settings } = deps;
  const { installation } = deps;
  const queries = watchQueries(deps.store, installation);
  const graceMs = settings.graceMinutes * 60_000;
  /** Why a watch ended, in words. */
  const why = (reason: EndReason, opts: { by?: string | undefined; unreadSince?: number | undefined } = {}) =>
    endReasonText(reason, {
      by: opts.by,
      graceMinutes: settings.graceMinutes,
      maxDays: settings.maxDays,
      unreadSince: opts.unreadSince === undefined ? undefined : new Date(opts.unreadSince),
    });
  return {
    deps,
    queries,
    graceMs,
    why,
    /** What the installation saw of invoices, for the feed's list of those paid. */
    sightings: invoiceSightings(installation),

    /**
     * Whether a watch of the invoice can still see it change, as far as the bot can know: it
     * awaits payment (`awaitsPayment`, the one rule of final states the views word too), and its
     * expiry plus WATCH_GRACE_MINUTES, for a late payment, has not passed.
     */
    mayChange: (invoice: Pick<Invoice, 'status' | 'payStatus' | 'timeout'>, now: number): boolean =>
      awaitsPayment(invoice) && now < invoice.timeout.getTime() + graceMs,

    send: (trx: Kysely<Tables>, entries: readonly OutgoingEntry[], now: number) =>
      enqueue(trx, entries, now, installation),

    /** The invoice as last read, while it is polled. */
    async lastSeen(trx: Kysely<Tables>, invoiceId: string): Promise<Invoice | undefined> {
      const snapshot = await queries.lastSnapshot(trx, invoiceId);
      return snapshot ? fromSnapshot(JSON.parse(snapshot) as InvoiceSnapshot) : undefined;
    },

    /**
     * The card update and the thread reply that end a watch (a QUIET end sends neither:
     * `endWatch`). When a change ended it (`changes`, read at `now`), the one reply tells both the
     * change and the end: one event, one notification.
     */
    endingMessages(
      w: WatchRow,
      invoice: Invoice,
      reason: EndReason,
      now: number,
      opts: {
        by?: string | undefined;
        unreadSince?: number | undefined;
        changes?: readonly Change[];
      } = {},
    ): OutgoingEntry[] {
      const text = why(reason, opts);
      const card = liveInvoiceCard(invoice, {
        now: new Date(now),
        watch: { ...liveWatch(w), ended: { at: new Date(now), reason: text } },
      });
      return [
        { channel: w.channel_id, ts: w.card_ts, message: card, watchId: w.id },
        {
          channel: w.channel_id,
          threadTs: w.thread_ts,
          message:
            opts.changes && opts.changes.length > 0
              ? transitionMessage(invoice, opts.changes, w.watcher_id, new Date(now), text)
              : watchEndedMessage(invoice, text, w.watcher_id),
          watchId: w.id,
        },
      ];
    },
  };
}

export type WatchContext = ReturnType<typeof watchContext<WatchDeps>>;
