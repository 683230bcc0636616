import { type Expression, type Kysely, type SqlBool, sql } from 'kysely';
import type { Tables } from './schema.js';

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
 * The lease token a claimed row was taken under (the claim's RETURNING says): what the work on
 * it fences its writes with. Each claim writes a token of its own, so the work never needs to
 * know which instance, or which of its attempts, it is.
 */
export function leaseOf(row: { lease_owner: string | null }): string {
  if (row.lease_owner === null) throw new LeaseLost();
  return row.lease_owner;
}

/** Tables whose rows are claimed under a lease token (`lease_owner`, `lease_until`). */
export type LeasedTable = 'watched_invoices' | 'outbox' | 'feed_subscriptions' | 'singletons';

/**
 * Keeps the leases of work still running: every row of `table` still held under one of
 * `tokens` is leased until `now + leaseMs`, in one statement. Resolves with the tokens that
 * still hold a row; a token missing there holds none any more (taken over, or given back).
 * Fenced by the token alone: a row still carrying it was claimed by no one since, whatever the
 * clocks say.
 */
export async function renewLeases(
  db: Kysely<Tables>,
  table: LeasedTable,
  tokens: readonly string[],
  now: number,
  leaseMs: number,
): Promise<Set<string>> {
  if (tokens.length === 0) return new Set();
  const { rows } = await sql<{ lease_owner: string }>`update ${sql.table(table)}
    set lease_until = ${now + leaseMs}
    where lease_owner in (${sql.join(tokens)})
    returning lease_owner`.execute(db);
  return new Set(rows.map((r) => r.lease_owner));
}

/** A job's renewal of its table's leases (`Task.renew`). */
export const renewing =
  (db: Kysely<Tables>, table: LeasedTable) => (tokens: readonly string[], now: number, leaseMs: number) =>
    renewLeases(db, table, tokens, now, leaseMs);
