export { Amount } from './amount.js';
export { type BreakerState, CircuitBreaker } from './breaker.js';
export { createPaymentsClient, type PaymentsClient } from './client.js';
export { type Connections, openConnections } from './connections.js';
export * from './errors.js';
export { quietReserve } from './fair-slots.js';
export {
  type CallReport,
  createHealth,
  type Health,
  type HealthSnapshot,
} from './health.js';
export { type InvoiceId, parseInvoiceId } from './invoice-id.js';
export type { BalanceEntry, Invoice } from './schemas.js';
