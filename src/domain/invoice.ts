import type { Invoice } from '../payments/index.js';

/**
 * The statuses known to end an invoice's life: it takes no payment any more. The API document
 * names only `open` (docs/payment-api.md#open-sets), so the set is what the service has been seen
 * to send; a status not in it is not taken as final.
 */
const FINAL_STATUSES: ReadonlySet<string> = new Set(['closed', 'expired', 'cancelled']);

/**
 * Whether the invoice still awaits payment, so that its expiry is a deadline and a watch of it
 * goes on. The API document lists neither every status nor any transition, so this rule is the
 * bot's own (docs/invoices.md says it too): an invoice is final only in a state known to be final,
 * a status in FINAL_STATUSES or the payment status `paid` whatever the status. Any other state
 * awaits payment: `open` with `none` or a payment status never seen such as `partially_paid`, and
 * a status never seen such as `processing`, which may still end paid. A final invoice counts
 * nothing down and is never called expired because its time passed: its expiry is a date on record.
 */
export function awaitsPayment(invoice: Pick<Invoice, 'status' | 'payStatus'>): boolean {
  return !FINAL_STATUSES.has(invoice.status) && invoice.payStatus !== 'paid';
}
