/**
 * Thrown by a write fenced by a lease this instance no longer holds (it stalled, another took
 * over): the transaction is rolled back, so a stale instance writes and posts nothing. Watches
 * and the feed both fence their writes this way.
 */
export class LeaseLost extends Error {}
