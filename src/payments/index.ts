export { Amount } from './amount.js';
export { type BreakerState, CircuitBreaker } from './breaker.js';
export { createPaymentsClient, type PaymentsClient, type RetryPolicy } from './client.js';
export * from './errors.js';
export {
  type CallReport,
  type CallResult,
  createHealth,
  type Health,
  type HealthSnapshot,
} from './health.js';
export { type InvoiceId, parseInvoiceId } from './invoice-id.js';
export type { BalanceEntry, Invoice } from './schemas.js';
