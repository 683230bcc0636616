import { type Expression, type SqlBool, sql } from 'kysely';

/**
 * Thrown by a write fenced by a lease this instance no longer holds (it stalled, another took
 * over): the transaction is rolled back, so a stale instance writes and posts nothing. Watches
 * and the feed both fence their writes this way.
 */
export class LeaseLost extends Error {}

/**
 * A lease ending further ahead than this was not taken by this clock's now (every lease is 30 s
 * long): the clock was stepped back since (an NTP correction). It is free; a holder still alive
 * finds its fenced writes refused (LeaseLost), so nothing is done twice.
 */
export const LEASE_STEPPED_BACK_MS = 5 * 60_000;

/**
 * A row free to claim at `now`: leased to nobody, or to somebody whose lease ran out (or was
 * taken by a clock since stepped back). `column` is the row's `lease_until`, qualified as the
 * query names its table.
 */
export const leaseFree = (column: string, now: number): Expression<SqlBool> =>
  sql<SqlBool>`(${sql.ref(column)} is null or ${sql.ref(column)} < ${now} or ${sql.ref(column)} > ${now + LEASE_STEPPED_BACK_MS})`;
