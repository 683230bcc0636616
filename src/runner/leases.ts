import {
  type Expression,
  type Kysely,
  type RawBuilder,
  type Selectable,
  type SelectQueryBuilder,
  type SqlBool,
  sql,
} from 'kysely';
import type { Store } from '../store/database.js';
import { onPostgres, prepared } from '../store/prepared.js';
import type { Tables } from '../store/schema.js';

/**
 * The lease protocol's statements, all of them: no job names a lease column
 * (test/architecture.test.ts; a row written down new or ended spreads `UNLEASED`). A job says which rows it claims (a `Queue` and a choice of its
 * rows); the runner leases them under a token of the claim's own, renews them while the work
 * runs, and every write of the work is fenced by that token, never by comparing clocks.
 */

/**
 * Thrown by a write fenced by a lease this instance no longer holds (it stalled, another took
 * over): the transaction is rolled back, so a stale instance writes and posts nothing. The
 * runner turns it into the item's `lease_lost` outcome, whatever the job.
 */
export class LeaseLost extends Error {}

/** Tables whose rows are claimed under a lease token (`lease_owner`, `lease_until`). */
export type LeasedTable = 'watched_invoices' | 'outbox' | 'feed_subscriptions' | 'singletons';

type Row<TB extends LeasedTable> = Selectable<Tables[TB]>;
type Column<TB extends LeasedTable> = keyof Row<TB> & string;

/** A table of leased work as a job names it to the runner: its rows' key, and when each falls due. */
export interface Queue<TB extends LeasedTable> {
  readonly table: TB;
  /** The columns naming one row. */
  readonly key: readonly Column<TB>[];
  /** When a row falls due. */
  readonly due: Column<TB>;
  /**
   * A row given back is held from everyone until then, still due when it was (a digest's day is
   * its due time's), rather than due again then.
   */
  readonly holds?: boolean;
}

/** What a held row's token ends with: its claim's token, which renewals of the claim's running items no longer match. */
const HELD = '/held';

/** What a row being written down new, or ended, says of its lease: none. */
export const UNLEASED = { lease_owner: null, lease_until: null } as const;

/**
 * A row free to claim at `now`: leased to nobody, or to somebody whose lease ran out. `alias` is
 * the table as the query names it.
 */
export const freeAt = (alias: string, now: number): Expression<SqlBool> => {
  const until = sql.ref(`${alias}.lease_until`);
  return sql<SqlBool>`(${until} is null or ${until} < ${now})`;
};

/**
 * The lease token a claimed row was taken under (the claim's RETURNING says): what the work on
 * it fences its writes with. Each claim writes a token of its own, so the work never needs to
 * know which instance, or which of its attempts, it is.
 */
export function leaseOf(row: { lease_owner: string | null }): string {
  if (row.lease_owner === null) throw new LeaseLost();
  return row.lease_owner;
}

const keyOf = <TB extends LeasedTable>(queue: Queue<TB>) => sql.join(queue.key.map((k) => sql.ref(k)));

/**
 * The lease of a job's rows: leases to a claim (`owner`, until `until`) the rows `chosen` selects
 * (the queue's key columns, from its table named `alias`), of those free at `now`. On PostgreSQL a
 * row another claim is leasing at that moment is skipped, not waited for. Resolves with the rows
 * leased, as written (RETURNING has no order of its own). One statement, compiled once per shape
 * (src/store/prepared.ts): `chosen` uses its arguments only as the statement's values.
 */
export function leasing<TB extends LeasedTable, A, DB, From extends keyof DB & string, O>(
  queue: Queue<TB>,
  alias: string,
  chosen: (db: Kysely<Tables>, args: A) => SelectQueryBuilder<DB, From, O>,
): (db: Kysely<Tables>, args: A, lease: { owner: string; until: number }, now: number) => Promise<Row<TB>[]> {
  const statement = prepared(
    (db, { args, owner, until, now }: { args: A; owner: string; until: number; now: number }) => {
      const free = chosen(db, args)
        .where(freeAt(alias, now))
        .$if(onPostgres(db), (q) => q.forUpdate().skipLocked());
      return sql<Row<TB>>`update ${sql.table(queue.table)}
        set lease_owner = ${owner}, lease_until = ${until}
        where (${keyOf(queue)}) in ${free}
        returning *`;
    },
  );
  return async (db, args, { owner, until }, now) => (await statement(db, { args, owner, until, now })).rows;
}

/** `column = value` for each entry, joined by `separator`: a SET list, or the equalities naming rows. */
const equalities = (entries: readonly (readonly [string, unknown])[], separator: RawBuilder<unknown>) =>
  sql.join(
    entries.map(([column, value]) => sql`${sql.ref(column)} = ${value}`),
    separator,
  );

/**
 * Writes `values` to the row `match` names while the claim `owner` still holds it, and lets its
 * lease go (unless `keep`: the work goes on). False when the lease was lost: nothing written.
 */
export async function writeHeld<TB extends LeasedTable>(
  db: Kysely<Tables>,
  queue: Queue<TB>,
  match: Partial<Row<TB>>,
  owner: string,
  values: Partial<Row<TB>>,
  { keep = false }: { keep?: boolean } = {},
): Promise<boolean> {
  const written = Object.entries({ ...values, ...(keep ? {} : UNLEASED) }).filter(([, v]) => v !== undefined);
  const result = await sql`update ${sql.table(queue.table)}
    set ${equalities(written, sql`, `)}
    where ${equalities(Object.entries(match), sql` and `)} and lease_owner = ${owner}`.execute(db);
  return (result.numAffectedRows ?? 0n) > 0n;
}

/** As `writeHeld`, the lease let go; LeaseLost when it was lost (the transaction rolls back). */
export async function releaseHeld<TB extends LeasedTable>(
  db: Kysely<Tables>,
  queue: Queue<TB>,
  match: Partial<Row<TB>>,
  owner: string,
  values: Partial<Row<TB>>,
): Promise<void> {
  if (!(await writeHeld(db, queue, match, owner, values))) throw new LeaseLost();
}

/** The key of a claimed row, for `writeHeld`. */
const keyValues = <TB extends LeasedTable>(queue: Queue<TB>, row: Row<TB>): Partial<Row<TB>> =>
  Object.fromEntries(queue.key.map((k) => [k, row[k]])) as Partial<Row<TB>>;

/**
 * Gives a claimed row back unworked, due again at `until` (or, for a queue that `holds`, held
 * from everyone until then), only while the claim `owner` still holds it.
 */
async function giveBack<TB extends LeasedTable>(
  db: Kysely<Tables>,
  queue: Queue<TB>,
  row: Row<TB>,
  owner: string,
  until: number,
): Promise<void> {
  const match = keyValues(queue, row);
  // Held under a token of its own: renewals of the claim's other items would otherwise shorten it.
  if (queue.holds) {
    const held = { lease_owner: `${owner}${HELD}`, lease_until: until } as Partial<Row<TB>>;
    await writeHeld(db, queue, match, owner, held, { keep: true });
  } else await writeHeld(db, queue, match, owner, { [queue.due]: until } as Partial<Row<TB>>);
}

/** A column of a batch's VALUES list, typed for PostgreSQL (a bare parameter there is text; SQLite reads the same words). */
type Typed = 'text' | 'bigint';

/**
 * A statement that writes many claimed rows' values and lets their leases go, each only while
 * its claim's token still holds it; run, it resolves, in order, whether each was written.
 * `types` names the key's and the values' columns with their types; a column in `keep` keeps
 * what the row has when the value is null. Made once where it is used, compiled once per batch
 * size.
 */
export function releasing<TB extends LeasedTable>(
  queue: Queue<TB>,
  types: Readonly<Partial<Record<Column<TB>, Typed>>>,
  keep: readonly Column<TB>[],
): (
  db: Kysely<Tables>,
  done: readonly { row: Row<TB>; owner: string; values: Partial<Row<TB>> }[],
) => Promise<boolean[]> {
  const columns = Object.keys(types) as Column<TB>[];
  const written = columns.filter((c) => !queue.key.includes(c));
  const typeOf = (c: Column<TB>): Typed => {
    const type = types[c];
    // A key without a type would be compared as text: PostgreSQL refuses a number column equal to text.
    if (type === undefined) throw new Error(`releasing: no type for ${c}`);
    return type;
  };
  const statement = releaseStatement(
    queue,
    { key: queue.key.map(typeOf), written: written.map(typeOf) },
    keep,
    written,
  );
  const tag = (r: Record<string, unknown>) => queue.key.map((k) => String(r[k])).join('\n');
  return async (db, done) => {
    if (done.length === 0) return [];
    const untyped = done.flatMap(({ values }) =>
      Object.keys(values).filter((c) => !columns.includes(c as Column<TB>)),
    );
    // A value whose column is not typed would be left out of the statement, silently.
    if (untyped.length > 0) throw new Error(`releasing: no type for ${[...new Set(untyped)].join(', ')}`);
    const batch = done.map(({ row, owner, values }) => ({
      key: queue.key.map((k) => row[k]),
      owner,
      values: written.map((c) => values[c] ?? null),
    }));
    const { rows: recorded } = await statement(db, batch);
    const kept = new Set(recorded.map(tag));
    return done.map(({ row }) => kept.has(tag(row)));
  };
}

/** A batch of rows' key, claim token and written values, in `releasing`'s column order. */
type Release = { key: unknown[]; owner: string; values: unknown[] };

function releaseStatement<TB extends LeasedTable>(
  queue: Queue<TB>,
  types: { key: readonly Typed[]; written: readonly Typed[] },
  keep: readonly Column<TB>[],
  written: readonly Column<TB>[],
) {
  // The first row's casts type each column of the VALUES list (PostgreSQL resolves a VALUES
  // column as it resolves a UNION: the other rows' parameters take the first row's type), so the
  // other rows carry their values alone: a batch of 24 compiles 7 casts, not 168.
  const typedAs = (value: unknown, type: Typed) => sql`cast(${value} as ${sql.raw(type)})`;
  const plain = (value: unknown) => sql`${value}`;
  const table = sql.table(queue.table);
  const ref = (c: string) => sql.ref(`${queue.table}.${c}`);
  const set = written.map((c) =>
    keep.includes(c)
      ? sql`${sql.ref(c)} = coalesce(v.${sql.ref(c)}, ${ref(c)})`
      : sql`${sql.ref(c)} = v.${sql.ref(c)}`,
  );
  return prepared((_db, batch: Release[]) => {
    const rows = batch.map(({ key, owner, values }, i) => {
      const cast = i === 0 ? typedAs : plain;
      return sql`(${sql.join([
        ...types.key.map((type, j) => cast(key[j], type)),
        cast(owner, 'text'),
        ...types.written.map((type, j) => cast(values[j], type)),
      ])})`;
    });
    return sql<Record<string, unknown>>`
      with v (${keyOf(queue)}, lease_token, ${sql.join(written.map((c) => sql.ref(c)))}) as (values ${sql.join(rows)})
      update ${table}
      set ${sql.join(set)}, lease_owner = null, lease_until = null
      from v
      where ${sql.join(
        queue.key.map((k) => sql`${ref(k)} = v.${sql.ref(k)}`),
        sql` and `,
      )} and ${ref('lease_owner')} = v.lease_token
      returning ${sql.join(queue.key.map((k) => ref(k)))}`;
  });
}

/**
 * Leases every row of `table` still held under one of `tokens` until `now + leaseMs`, in one
 * statement. Resolves with the tokens that still hold a row; a token missing there holds none
 * any more (taken over, or given back). Fenced by the token alone: a row still carrying it was
 * claimed by no one since, whatever the clocks say.
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

/** What the runner does with a job's claimed rows beside the work: keeps their leases, gives them back. */
export interface LeaseQueue<R> {
  /** Leases every row still held by one of `tokens` until `now + leaseMs`; resolves with the tokens that still hold a row. */
  renew(tokens: readonly string[], now: number, leaseMs: number): Promise<ReadonlySet<string>>;
  /** Gives a claimed row back unworked, due again at `until`, only while its claim `owner` still holds it. */
  giveBack(row: R, owner: string, until: number): Promise<void>;
}

/** A queue's leases in the store. */
export const leaseQueue = <TB extends LeasedTable>(store: Store, queue: Queue<TB>): LeaseQueue<Row<TB>> => ({
  renew: (tokens, now, leaseMs) => renewLeases(store.db, queue.table, tokens, now, leaseMs),
  giveBack: (row, owner, until) => giveBack(store.db, queue, row, owner, until),
});

/**
 * When the next row free to claim at `now` falls due, of those `scope` selects (its table named
 * as the queue's, not aliased): undefined when none.
 */
export async function nextFreeAt<TB extends LeasedTable, DB, From extends keyof DB & string, O>(
  queue: Queue<TB>,
  scope: SelectQueryBuilder<DB, From, O>,
  now: number,
): Promise<number | undefined> {
  const found = await scope
    .select(sql<number | null>`min(${sql.ref(`${queue.table}.${queue.due}`)})`.as('next'))
    .where(freeAt(queue.table, now))
    .executeTakeFirstOrThrow();
  // MIN gives one row, its value null when nothing is free.
  const { next } = found as unknown as { next: number | string | null };
  return next === null ? undefined : Number(next);
}
