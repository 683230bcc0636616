import type { Kysely } from 'kysely';
import { KEEP_HISTORY_MS } from '../feed/poll.js';
import type { Invoice } from '../payments/index.js';
import type { InstallationId } from '../store/keys.js';
import type { Tables } from '../store/schema.js';

/**
 * The states a watched invoice was seen in, for its side panel (issue 41): written when a watch
 * starts and when a check finds its status or payment status changed, in the same transaction
 * as what that check tells. Ordered by the id the database gives each row; only the latest
 * KEPT_STATES of an invoice are kept, those of an invoice no longer watched only as long as the
 * feed keeps what lookups saw (KEEP_HISTORY_MS), and uninstalling deletes them (INSTALLATION_TABLES).
 */
export const KEPT_STATES = 20;

type State = Pick<Invoice, 'id' | 'status' | 'payStatus'>;

/** The installation's rows of one invoice. */
const rowsOf = (trx: Kysely<Tables>, installation: InstallationId, invoiceId: string) =>
  trx
    .selectFrom('invoice_states_seen')
    .where('installation_id', '=', installation)
    .where('invoice_id', '=', invoiceId);

/** Records the invoice's state as seen at `at`, unless it is the state last recorded. */
export async function recordState(
  trx: Kysely<Tables>,
  installation: InstallationId,
  invoice: State,
  at: number,
): Promise<void> {
  const last = await rowsOf(trx, installation, invoice.id)
    .select(['status', 'pay_status'])
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (last?.status === invoice.status && last.pay_status === invoice.payStatus) return;
  await trx
    .insertInto('invoice_states_seen')
    .values({
      installation_id: installation,
      invoice_id: invoice.id,
      status: invoice.status,
      pay_status: invoice.payStatus,
      seen_at: at,
    })
    .execute();
  await trx
    .deleteFrom('invoice_states_seen')
    .where('installation_id', '=', installation)
    .where('invoice_id', '=', invoice.id)
    .where(
      'id',
      'not in',
      rowsOf(trx, installation, invoice.id).select('id').orderBy('id', 'desc').limit(KEPT_STATES),
    )
    .execute();
  await pruneStates(trx, installation, at - KEEP_HISTORY_MS);
}

/**
 * Forgets the installation's states seen before `before` of the invoices it no longer watches:
 * pruned where they are written, as the feed prunes the invoices seen with each reading, so an
 * installation without a feed forgets them too. A watched invoice keeps its panel's states.
 */
async function pruneStates(trx: Kysely<Tables>, installation: InstallationId, before: number) {
  await trx
    .deleteFrom('invoice_states_seen')
    .where('installation_id', '=', installation)
    .where('seen_at', '<', before)
    .where(
      'invoice_id',
      'not in',
      trx.selectFrom('watched_invoices').select('invoice_id').where('installation_id', '=', installation),
    )
    .execute();
}

/** The states the invoice was seen in, oldest first. */
export async function statesSeen(db: Kysely<Tables>, installation: InstallationId, invoiceId: string) {
  const rows = await rowsOf(db, installation, invoiceId)
    .select(['status', 'pay_status', 'seen_at'])
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ status: r.status, payStatus: r.pay_status, at: new Date(Number(r.seen_at)) }));
}
