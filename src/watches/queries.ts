import type { Kysely, Selectable } from 'kysely';
import type { EndReason } from '../domain/watch.js';
import type { Store } from '../store/database.js';
import { leaseFree } from '../store/lease.js';
import { PACE_HORIZON_MS } from '../store/pace.js';
import type { Tables } from '../store/schema.js';

export type WatchRow = Selectable<Tables['watches']>;
export type WatchedInvoiceRow = Selectable<Tables['watched_invoices']>;

/** While several installations have checks due, the most of one installation's checks an instance runs at once. */
export const SHARED_SLOTS = 2;

/** A claim reads and leases again at most this often when other instances took what it chose. */
const CLAIM_ROUNDS = 4;

/** A watch as listed, with its invoice's last known state when it has been read. */
export type ListedWatch = WatchRow & { snapshot: string | null };

/**
 * The store's side of watching: every query the watches make, and nothing else. Each reads and
 * writes only `installation`'s rows ('' is the one workspace's); claiming due checks, and the
 * counts for the metrics, are across installations: the scheduler serves them all.
 */
export function watchQueries(store: Store, installation = '') {
  const { db } = store;
  const listed = (trx: Kysely<Tables>) =>
    trx
      .selectFrom('watches')
      .leftJoin('watched_invoices', (join) =>
        join
          .onRef('watched_invoices.invoice_id', '=', 'watches.invoice_id')
          .onRef('watched_invoices.installation_id', '=', 'watches.installation_id'),
      )
      .selectAll('watches')
      .select('watched_invoices.snapshot')
      .where('watches.installation_id', '=', installation)
      .where('watches.state', '=', 'active')
      .orderBy('watches.started_at');
  const watches = (trx: Kysely<Tables>) =>
    trx.selectFrom('watches').selectAll().where('installation_id', '=', installation);
  const invoices = (trx: Kysely<Tables>) =>
    trx.updateTable('watched_invoices').where('installation_id', '=', installation);

  return {
    /** The channel's active watch of an invoice, if any. */
    active: (channelId: string, invoiceId: string) =>
      watches(db)
        .where('channel_id', '=', channelId)
        .where('invoice_id', '=', invoiceId)
        .where('state', '=', 'active')
        .executeTakeFirst(),

    /** The channel's watch of an invoice that has not ended, active or pending, if any. */
    current: (channelId: string, invoiceId: string) =>
      watches(db)
        .where('channel_id', '=', channelId)
        .where('invoice_id', '=', invoiceId)
        .where('state', '!=', 'ended')
        .executeTakeFirst(),

    /** The channel's watches that count against its limit: active, and pending (being started). */
    countActive: async (channelId: string) => {
      const { n } = await db
        .selectFrom('watches')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('installation_id', '=', installation)
        .where('channel_id', '=', channelId)
        .where('state', '!=', 'ended')
        .executeTakeFirstOrThrow();
      return Number(n);
    },

    /** A watch of this installation by id (a Stop button's value): another installation's is none. */
    byId: (id: string) => watches(db).where('id', '=', id).executeTakeFirst(),

    /** The invoice as last seen, as JSON, if it is still watched. */
    lastSnapshot: async (trx: Kysely<Tables>, invoiceId: string) =>
      (
        await trx
          .selectFrom('watched_invoices')
          .select('snapshot')
          .where('installation_id', '=', installation)
          .where('invoice_id', '=', invoiceId)
          .executeTakeFirst()
      )?.snapshot,

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

    /**
     * Stores a new watch (a pending one, before its card is posted) and, if no other watch polls
     * its invoice yet, the invoice to poll.
     */
    async insert(
      trx: Kysely<Tables>,
      watch: Omit<WatchRow, 'installation_id'>,
      snapshot: string,
      nextPollAt: number,
    ): Promise<void> {
      await trx
        .insertInto('watches')
        .values({ ...watch, installation_id: installation })
        .execute();
      await trx
        .insertInto('watched_invoices')
        .values({
          installation_id: installation,
          invoice_id: watch.invoice_id,
          snapshot,
          watched_since: watch.started_at,
          next_poll_at: nextPollAt,
          failures: 0,
          failing_since: null,
          lease_owner: null,
          lease_until: null,
        })
        .onConflict((oc) => oc.columns(['installation_id', 'invoice_id']).doNothing())
        .execute();
    },

    /** Ends an active watch; false when it had already ended. */
    async end(trx: Kysely<Tables>, id: string, reason: EndReason, now: number): Promise<boolean> {
      const result = await trx
        .updateTable('watches')
        .set({ state: 'ended', ended_at: now, end_reason: reason })
        .where('installation_id', '=', installation)
        .where('id', '=', id)
        .where('state', '=', 'active')
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    activeOfInvoice: (trx: Kysely<Tables>, invoiceId: string) =>
      watches(trx).where('invoice_id', '=', invoiceId).where('state', '=', 'active').execute(),

    /**
     * Of these watches, the ones still active, locked until the transaction ends (PostgreSQL; on
     * SQLite the transaction holds the write lock): one a Stop ended since they were read is
     * left out, and a Stop that comes now waits for the transaction.
     */
    holdActive: async (trx: Kysely<Tables>, ids: readonly string[]) =>
      ids.length === 0
        ? []
        : watches(trx)
            .where('id', 'in', ids)
            .where('state', '=', 'active')
            .$if(store.dialect === 'postgres', (q) => q.forUpdate())
            .execute(),

    /** Makes a pending watch active with its card; false when it is no longer pending. */
    async activate(trx: Kysely<Tables>, id: string, card: Pick<WatchRow, 'card_ts' | 'thread_ts'>) {
      const result = await trx
        .updateTable('watches')
        .set({ state: 'active', card_ts: card.card_ts, thread_ts: card.thread_ts })
        .where('installation_id', '=', installation)
        .where('id', '=', id)
        .where('state', '=', 'pending')
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /** Forgets a pending watch whose card is known not to be in Slack; false when it is no longer pending. */
    async drop(trx: Kysely<Tables>, id: string): Promise<boolean> {
      const result = await trx
        .deleteFrom('watches')
        .where('installation_id', '=', installation)
        .where('id', '=', id)
        .where('state', '=', 'pending')
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    /** The invoice's watches pending since `before` or earlier: their start did not finish. */
    pendingSince: (invoiceId: string, before: number) =>
      watches(db)
        .where('invoice_id', '=', invoiceId)
        .where('state', '=', 'pending')
        .where('started_at', '<=', before)
        .execute(),

    /** Stops polling an invoice nobody watches any more (a pending watch still does); true when it did. */
    async forgetIfUnwatched(trx: Kysely<Tables>, invoiceId: string): Promise<boolean> {
      const result = await trx
        .deleteFrom('watched_invoices')
        .where('installation_id', '=', installation)
        .where('invoice_id', '=', invoiceId)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('watches')
                .select('id')
                .where('watches.installation_id', '=', installation)
                .where('watches.invoice_id', '=', invoiceId)
                .where('watches.state', '!=', 'ended'),
            ),
          ),
        )
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    /**
     * Takes up to `limit` invoices due for a check, leased to `owner` until `now + leaseMs`, across
     * installations and fairly: the installations with the longest overdue checks first, each
     * given an even share of `limit`, so one installation with thousands of due checks does not
     * hold back another's single one. Within an installation, the longest overdue first. While
     * several installations have checks due, none holds more than SHARED_SLOTS of this
     * instance's checks at once (`busy`: its checks still running here). Returned longest
     * overdue first.
     *
     * An installation's checks are taken only while its key's next free call (src/store/pace.ts)
     * is less than PACE_HORIZON_MS away, and with `paceMs` (each key's background calls that far
     * apart, all instances together) no more than its key can start by then: a claimed check
     * waits for its turn briefly, not on its lease.
     */
    async claimDue(
      owner: string,
      now: number,
      limit: number,
      leaseMs: number,
      busy: ReadonlyMap<string, number> = new Map(),
      paceMs?: number,
    ): Promise<WatchedInvoiceRow[]> {
      const horizon = now + PACE_HORIZON_MS;
      /**
       * Each installation's due checks numbered oldest first (its turns), every installation's
       * first turn before anyone's second, with its key's next free slot; enough of them for the
       * walk below, which skips rows of installations already at their room. A key whose next
       * free call is past the horizon has none of its checks numbered.
       */
      const candidates = (room: number) =>
        db
          .selectFrom((eb) =>
            eb
              .selectFrom('watched_invoices as w')
              .leftJoin('background_pace as p', 'p.installation_id', 'w.installation_id')
              .select((eb) => [
                'w.installation_id',
                'w.invoice_id',
                'w.next_poll_at',
                'p.next_slot_at',
                eb.fn
                  .agg<number>('row_number')
                  .over((ob) => ob.partitionBy('w.installation_id').orderBy('w.next_poll_at'))
                  .as('turn'),
              ])
              .where('w.next_poll_at', '<=', now)
              .where(leaseFree('w.lease_until', now))
              .where((w) => w.or([w('p.next_slot_at', 'is', null), w('p.next_slot_at', '<', horizon)]))
              .as('d'),
          )
          .selectAll()
          .where('turn', '<=', room)
          .orderBy('turn')
          .orderBy('next_poll_at')
          .orderBy('installation_id')
          .limit((room + busy.size) * (SHARED_SLOTS + 1))
          .execute();
      /** Leases the chosen checks still unleased: another instance may have been quicker. */
      const lease = (chosen: { installation_id: string; invoice_id: string }[]) =>
        db
          .updateTable('watched_invoices')
          .set({ lease_owner: owner, lease_until: now + leaseMs })
          .where(({ eb, refTuple, tuple, selectFrom }) =>
            eb(
              refTuple('installation_id', 'invoice_id'),
              'in',
              selectFrom('watched_invoices')
                .select(['installation_id', 'invoice_id'])
                .where(
                  refTuple('installation_id', 'invoice_id'),
                  'in',
                  chosen.map((c) => tuple(c.installation_id, c.invoice_id)),
                )
                .where('next_poll_at', '<=', now)
                .where(leaseFree('lease_until', now))
                .$if(store.dialect === 'postgres', (q) => q.forUpdate().skipLocked())
                .$asTuple('installation_id', 'invoice_id'),
            ),
          )
          .returningAll()
          .execute();
      /** The calls the key can start before the horizon, all instances together. */
      const paced = (nextSlotAt: number | null) =>
        paceMs === undefined
          ? Number.POSITIVE_INFINITY
          : Math.ceil((horizon - Math.max(Number(nextSlotAt ?? now), now)) / paceMs);
      const claimed: WatchedInvoiceRow[] = [];
      let several = false;
      // Two statements a round; another round only for what other instances took meanwhile.
      for (let round = 0; round < CLAIM_ROUNDS && claimed.length < limit; round += 1) {
        /** This claim's checks of each installation so far. */
        const taken = new Map<string, number>();
        for (const r of claimed) taken.set(r.installation_id, (taken.get(r.installation_id) ?? 0) + 1);
        const rows = await candidates(limit - claimed.length);
        const first = rows[0]?.installation_id;
        several ||= rows.some((c) => c.installation_id !== first);
        const chosen: typeof rows = [];
        for (const c of rows) {
          if (claimed.length + chosen.length === limit) break;
          const room =
            Math.min(several ? SHARED_SLOTS : Number.POSITIVE_INFINITY, paced(c.next_slot_at)) -
            (busy.get(c.installation_id) ?? 0);
          const mine = taken.get(c.installation_id) ?? 0;
          if (mine >= room) continue;
          taken.set(c.installation_id, mine + 1);
          chosen.push(c);
        }
        if (chosen.length === 0) break;
        const leased = await lease(chosen);
        claimed.push(...leased);
        if (leased.length === chosen.length) break;
      }
      // RETURNING has no order of its own: the longest overdue first.
      return claimed.sort((x, y) => x.next_poll_at - y.next_poll_at);
    },

    /** Gives a claimed check back unmade, to be tried at `nextAt` (its installation cannot be served now). */
    async postpone(owner: string, row: WatchedInvoiceRow, nextAt: number): Promise<void> {
      await db
        .updateTable('watched_invoices')
        .set({ next_poll_at: nextAt, lease_owner: null, lease_until: null })
        .where('installation_id', '=', row.installation_id)
        .where('invoice_id', '=', row.invoice_id)
        .where('lease_owner', '=', owner)
        .execute();
    },

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
      const result = await invoices(trx)
        .set({ ...values, lease_owner: null, lease_until: null })
        .where('invoice_id', '=', invoiceId)
        .where('lease_owner', '=', owner)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /** When the next check not leased to anyone falls due. */
    nextDueAt: async (now: number): Promise<number | undefined> => {
      const { next } = await db
        .selectFrom('watched_invoices')
        .select((eb) => eb.fn.min<number | null>('next_poll_at').as('next'))
        .where(leaseFree('lease_until', now))
        .executeTakeFirstOrThrow();
      return next === null ? undefined : Number(next);
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
