import type { Kysely } from 'kysely';
import type { Invoice } from '../payments/index.js';
import type { Store } from '../store/database.js';
import type { InstallationId } from '../store/keys.js';
import type { Tables } from '../store/schema.js';

/**
 * The payment statuses that mean an invoice was paid. The API document has seen only `none`
 * (docs/payment-api.md), so this is what the service has been seen to send; any other status,
 * one never seen included, is not taken as paid.
 */
const PAID_STATUSES: ReadonlySet<string> = new Set(['paid', 'overpaid']);

/** A paid sighting older than this is written again by the next lookup, so pruning with the feed's history keeps it. */
const SEEN_AGAIN_MS = 24 * 3_600_000;

const isPaid = (invoice: Pick<Invoice, 'payStatus'>): boolean => PAID_STATUSES.has(invoice.payStatus);

/** How the bot came to see an invoice paid: a watch's check saw it turn paid, or a lookup saw it paid first. */
type How = Tables['invoices_paid']['how'];

/**
 * What an installation saw of the invoices it watched or looked up: whether its last sighting of
 * each was paid, and each invoice it saw turn paid (or saw paid first) in a conversation, for
 * the feed's posts and digests there (src/feed/paid-invoices.ts lists them). Times are the
 * store's clock (the database server's on PostgreSQL), as everywhere a job records one.
 */
export function invoiceSightings(installation: InstallationId) {
  /** The last sighting: whether it was paid, and when; undefined when there was none. */
  async function lastSeen(db: Kysely<Tables>, invoiceId: string) {
    const row = await db
      .selectFrom('invoices_seen')
      .select(['paid', 'seen_at'])
      .where('installation_id', '=', installation)
      .where('invoice_id', '=', invoiceId)
      .executeTakeFirst();
    return row === undefined ? undefined : { paid: row.paid === 1, at: row.seen_at };
  }

  async function remember(trx: Kysely<Tables>, invoice: Invoice, at: number): Promise<void> {
    const paid = isPaid(invoice) ? 1 : 0;
    await trx
      .insertInto('invoices_seen')
      .values({ installation_id: installation, invoice_id: invoice.id, paid, seen_at: at })
      .onConflict((oc) => oc.columns(['installation_id', 'invoice_id']).doUpdateSet({ paid, seen_at: at }))
      .execute();
  }

  /** Records the invoice paid in these conversations, once each however often it is seen. */
  async function paidIn(
    trx: Kysely<Tables>,
    channels: readonly string[],
    invoice: Invoice,
    how: How,
    at: number,
  ): Promise<void> {
    const unique = [...new Set(channels)];
    if (unique.length === 0) return;
    await trx
      .insertInto('invoices_paid')
      .values(
        unique.map((channel) => ({
          installation_id: installation,
          channel_id: channel,
          invoice_id: invoice.id,
          title: invoice.title,
          amount: invoice.amount.toString(),
          currency: invoice.currency,
          link: invoice.link,
          how,
          paid_at: at,
        })),
      )
      .onConflict((oc) => oc.columns(['installation_id', 'channel_id', 'invoice_id']).doNothing())
      .execute();
  }

  return {
    /**
     * A lookup (/invoice, Refresh, an unfurl, the shortcut, Share in thread, a workflow step) read
     * the invoice, and `channelId` saw the answer. Seen paid when this installation's last
     * sighting was not, or when there was none, it is recorded paid there, as "seen paid" at this
     * time. A lookup no conversation saw (undefined: only the asker did) is not a sighting: the
     * Share in thread or the channel's lookup that follows names it there.
     */
    async lookedUp(
      store: Pick<Store, 'db' | 'transaction'>,
      invoice: Invoice,
      channelId: string,
      at: number,
    ) {
      const before = await lastSeen(store.db, invoice.id);
      const paid = isPaid(invoice);
      // A lookup answers at once: it writes only what is news (seen paid first, or no longer
      // paid), and a paid sighting kept past a day is seen again so the feed's retention keeps it.
      const news = paid ? before?.paid !== true : before?.paid === true;
      if (!news && !(paid && before !== undefined && at - before.at > SEEN_AGAIN_MS)) return;
      // Its commit does not wait for the disk, nor holds SQLite's one thread for it: a power cut
      // in that moment loses a line of a feed post, never a watch or a message.
      await store.transaction(
        async (trx) => {
          await remember(trx, invoice, at);
          if (news && paid) await paidIn(trx, [channelId], invoice, 'seen', at);
        },
        { synchronous: false },
      );
    },

    /**
     * A watch's check read the invoice, last read as `before`: when it turned paid, it is recorded
     * paid in each conversation that watches it.
     */
    async checked(
      trx: Kysely<Tables>,
      before: Pick<Invoice, 'payStatus'>,
      invoice: Invoice,
      channels: readonly string[],
      at: number,
    ) {
      await remember(trx, invoice, at);
      if (!isPaid(before) && isPaid(invoice)) await paidIn(trx, channels, invoice, 'watched', at);
    },
  };
}
