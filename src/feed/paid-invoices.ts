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

/** Marks these rows listed in a post, or named in a digest. */
async function mark(
  trx: Kysely<Tables>,
  rows: readonly PaidRow[],
  as: { listed: 1 } | { digested: 1 },
): Promise<void> {
  if (rows.length === 0) return;
  await trx
    .updateTable('invoices_paid')
    .set(as)
    .where(
      'id',
      'in',
      rows.map((r) => r.id),
    )
    .execute();
}

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
      await mark(trx, rows, { listed: 1 });
      return { shown: rows.slice(0, MAX_PAID_LISTED).map(itemOf), total: rows.length };
    },

    /**
     * For the channel's digest: those no digest there has named yet, recorded after its feed
     * began (`since`), listed in a post or not; marked named in the same transaction as the digest
     * is queued, so each is in one digest, and those a skipped or turned-off digest did not take
     * wait for the next one sent (as long as they are kept).
     */
    async forDigest(trx: Kysely<Tables>, channelId: string, since: number): Promise<PaidInvoices> {
      const rows = await inChannel(trx, channelId)
        .selectAll()
        .where('digested', '=', 0)
        .where('paid_at', '>', since)
        .orderBy('id')
        .execute();
      await mark(trx, rows, { digested: 1 });
      return { shown: rows.slice(0, MAX_PAID_LISTED).map(itemOf), total: rows.length };
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
