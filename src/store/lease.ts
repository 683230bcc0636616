import { type Expression, type SqlBool, sql } from 'kysely';

/**
 * Thrown by a write fenced by a lease this instance no longer holds (it stalled, another took
 * over): the transaction is rolled back, so a stale instance writes and posts nothing. Watches
 * and the feed both fence their writes this way.
 */
export class LeaseLost extends Error {}

/**
 * A row free to claim at `now`: leased to nobody, or to somebody whose lease ran out. `column`
 * is the row's `lease_until`, qualified as the query names its table.
 */
export const leaseFree = (column: string, now: number): Expression<SqlBool> =>
  sql<SqlBool>`(${sql.ref(column)} is null or ${sql.ref(column)} < ${now})`;

/**
 * Who holds the lease a claimed row was taken under (the claim's RETURNING says): what the work
 * on it fences its writes with, so the work never needs to know which instance it runs on.
 */
export function leaseOf(row: { lease_owner: string | null }): string {
  if (row.lease_owner === null) throw new LeaseLost();
  return row.lease_owner;
}
