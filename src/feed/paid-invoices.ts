import type { Kysely, Selectable } from 'kysely';
import type { InstallationId } from '../store/keys.js';
import type { Tables } from '../store/schema.js';
import { MAX_PAID_LISTED, type PaidInvoiceItem, type PaidInvoices } from '../views/paid-invoices.js';

type PaidRow = Selectable<Tables['invoices_paid']>;

const itemOf = (r: PaidRow): PaidInvoiceItem => ({
  invoiceId: r.invoice_id,
  title: r.title,
  amount: r.amount,
  currency: r.currency,
  link: r.link,
  how: r.how,
  paidAt: new Date(Number(r.paid_at)),
});

/**
 * The invoices an installation watched or looked up that were paid, as a feed channel lists
 * them (src/watches/invoices-seen.ts records them). A channel lists only those watched or looked
 * up in that very channel (docs/feed.md#invoices-paid): a feed channel may see the balance, which
 * says nothing of what another conversation may see. Listed in the order the database numbered
 * them, never by comparing two instances' clocks.
 */
export function paidInvoiceQueries(installation: InstallationId) {
  const inChannel = (trx: Kysely<Tables>, channelId: string) =>
    trx
      .selectFrom('invoices_paid')
      .where('installation_id', '=', installation)
      .where('channel_id', '=', channelId);

  return {
    /**
     * For the channel's next feed post: those no post there has listed yet, recorded after its
     * feed began (`since`), marked listed in the same transaction as the post is queued, so each
     * is named in one post.
     */
    async forPost(trx: Kysely<Tables>, channelId: string, since: number): Promise<PaidInvoices> {
      const rows = await inChannel(trx, channelId)
        .selectAll()
        .where('listed', '=', 0)
        .where('paid_at', '>', since)
        .orderBy('id')
        .execute();
      if (rows.length > 0)
        await trx
          .updateTable('invoices_paid')
          .set({ listed: 1 })
          .where(
            'id',
            'in',
            rows.map((r) => r.id),
          )
          .execute();
      return { shown: rows.slice(0, MAX_PAID_LISTED).map(itemOf), total: rows.length };
    },

    /** For the channel's digest: those recorded after `since`, the first MAX_PAID_LISTED and the count. */
    async forDigest(trx: Kysely<Tables>, channelId: string, since: number): Promise<PaidInvoices> {
      const shown = await inChannel(trx, channelId)
        .selectAll()
        .where('paid_at', '>', since)
        .orderBy('id')
        .limit(MAX_PAID_LISTED)
        .execute();
      const counted = await inChannel(trx, channelId)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('paid_at', '>', since)
        .executeTakeFirst();
      return { shown: shown.map(itemOf), total: Number(counted?.n ?? 0) };
    },

    /** Forgets what was seen before `before`: the feed keeps its history as long (src/feed/poll.ts). */
    async prune(trx: Kysely<Tables>, before: number): Promise<void> {
      await trx
        .deleteFrom('invoices_paid')
        .where('installation_id', '=', installation)
        .where('paid_at', '<', before)
        .execute();
      await trx
        .deleteFrom('invoices_seen')
        .where('installation_id', '=', installation)
        .where('seen_at', '<', before)
        .execute();
    },
  };
}
