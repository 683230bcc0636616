import type { Kysely, Selectable } from 'kysely';
import type { Store } from '../store/database.js';
import type { Tables } from '../store/schema.js';
import type { EndReason } from '../views/watch.js';

export type WatchRow = Selectable<Tables['watches']>;
export type WatchedInvoiceRow = Selectable<Tables['watched_invoices']>;

/** A watch as listed, with its invoice's last known state when it has been read. */
export type ListedWatch = WatchRow & { snapshot: string | null };

/** The store's side of watching: every query the watches make, and nothing else. */
export function watchQueries(store: Store) {
  const { db } = store;
  const listed = (trx: Kysely<Tables>) =>
    trx
      .selectFrom('watches')
      .leftJoin('watched_invoices', 'watched_invoices.invoice_id', 'watches.invoice_id')
      .selectAll('watches')
      .select('watched_invoices.snapshot')
      .where('watches.state', '=', 'active')
      .orderBy('watches.started_at');

  return {
    /** The channel's active watch of an invoice, if any. */
    active: (channelId: string, invoiceId: string) =>
      db
        .selectFrom('watches')
        .selectAll()
        .where('channel_id', '=', channelId)
        .where('invoice_id', '=', invoiceId)
        .where('state', '=', 'active')
        .executeTakeFirst(),

    countActive: async (channelId: string) => {
      const { n } = await db
        .selectFrom('watches')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('channel_id', '=', channelId)
        .where('state', '=', 'active')
        .executeTakeFirstOrThrow();
      return Number(n);
    },

    byId: (id: string) => db.selectFrom('watches').selectAll().where('id', '=', id).executeTakeFirst(),

    /** The channel's active watches, oldest first. */
    listInChannel: (channelId: string): Promise<ListedWatch[]> =>
      listed(db).where('watches.channel_id', '=', channelId).execute(),

    /** The active watches a person started in a workspace, oldest first. */
    listStartedBy: (teamId: string, userId: string): Promise<ListedWatch[]> =>
      listed(db).where('watches.team_id', '=', teamId).where('watches.watcher_id', '=', userId).execute(),

    countAllActive: async () => {
      const { n } = await db
        .selectFrom('watches')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('state', '=', 'active')
        .executeTakeFirstOrThrow();
      return Number(n);
    },

    /** Stores a new watch and, if no other watch polls its invoice yet, the invoice to poll. */
    async insert(trx: Kysely<Tables>, watch: WatchRow, snapshot: string, nextPollAt: number): Promise<void> {
      await trx.insertInto('watches').values(watch).execute();
      await trx
        .insertInto('watched_invoices')
        .values({
          invoice_id: watch.invoice_id,
          snapshot,
          watched_since: watch.started_at,
          next_poll_at: nextPollAt,
          failures: 0,
          failing_since: null,
          lease_owner: null,
          lease_until: null,
        })
        .onConflict((oc) => oc.column('invoice_id').doNothing())
        .execute();
    },

    /** Ends an active watch; false when it had already ended. */
    async end(trx: Kysely<Tables>, id: string, reason: EndReason, now: number): Promise<boolean> {
      const result = await trx
        .updateTable('watches')
        .set({ state: 'ended', ended_at: now, end_reason: reason })
        .where('id', '=', id)
        .where('state', '=', 'active')
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    activeOfInvoice: (trx: Kysely<Tables>, invoiceId: string) =>
      trx
        .selectFrom('watches')
        .selectAll()
        .where('invoice_id', '=', invoiceId)
        .where('state', '=', 'active')
        .execute(),

    /** Stops polling an invoice nobody watches any more. */
    async forgetIfUnwatched(trx: Kysely<Tables>, invoiceId: string): Promise<void> {
      await trx
        .deleteFrom('watched_invoices')
        .where('invoice_id', '=', invoiceId)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('watches')
                .select('id')
                .where('watches.invoice_id', '=', invoiceId)
                .where('watches.state', '=', 'active'),
            ),
          ),
        )
        .execute();
    },

    /**
     * Takes up to `limit` invoices due for a check, the longest overdue first, leased to `owner`
     * until `now + leaseMs` (RETURNING has no order of its own, so they are sorted here).
     */
    claimDue: async (
      owner: string,
      now: number,
      limit: number,
      leaseMs: number,
    ): Promise<WatchedInvoiceRow[]> =>
      (
        await db
          .updateTable('watched_invoices')
          .set({ lease_owner: owner, lease_until: now + leaseMs })
          .where('invoice_id', 'in', (eb) =>
            eb
              .selectFrom('watched_invoices as w')
              .select('w.invoice_id')
              .where('w.next_poll_at', '<=', now)
              .where((w) => w.or([w('w.lease_until', 'is', null), w('w.lease_until', '<', now)]))
              .orderBy('w.next_poll_at')
              .limit(limit)
              .$if(store.dialect === 'postgres', (q) => q.forUpdate().skipLocked()),
          )
          .returningAll()
          .execute()
      ).sort((a, b) => a.next_poll_at - b.next_poll_at),

    /**
     * Records a check and releases the lease, only while `owner` still holds it: an instance
     * whose lease ran out (it stalled, another took over) cannot write a stale decision.
     */
    async complete(
      trx: Kysely<Tables>,
      owner: string,
      invoiceId: string,
      values: Pick<WatchedInvoiceRow, 'next_poll_at' | 'failures'> &
        Partial<Pick<WatchedInvoiceRow, 'snapshot' | 'failing_since'>>,
    ): Promise<boolean> {
      const result = await trx
        .updateTable('watched_invoices')
        .set({ ...values, lease_owner: null, lease_until: null })
        .where('invoice_id', '=', invoiceId)
        .where('lease_owner', '=', owner)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /** When the next check not leased to anyone falls due. */
    nextDueAt: async (now: number): Promise<number | undefined> => {
      const row = await db
        .selectFrom('watched_invoices')
        .select((eb) => eb.fn.min<number>('next_poll_at').as('next'))
        .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<', now)]))
        .executeTakeFirst();
      return row?.next === null || row?.next === undefined ? undefined : Number(row.next);
    },

    /** How many checks are due now, for the metrics. */
    dueCount: async (now: number) => {
      const { n } = await db
        .selectFrom('watched_invoices')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('next_poll_at', '<=', now)
        .executeTakeFirstOrThrow();
      return Number(n);
    },
  };
}

export type WatchQueries = ReturnType<typeof watchQueries>;
