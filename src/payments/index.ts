export { Amount } from './amount.js';
export {
  createPaymentsClient,
  DEFAULT_RETRY,
  DEFAULT_TIMEOUT_MS,
  type PaymentsClient,
  type PaymentsClientOptions,
  type RetryPolicy,
} from './client.js';
export * from './errors.js';
export { type InvoiceId, parseInvoiceId } from './invoice-id.js';
export type { BalanceEntry, Invoice, Shop } from './schemas.js';
