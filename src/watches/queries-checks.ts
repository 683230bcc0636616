import { type Kysely, type Selectable, sql } from 'kysely';
import type { Store } from '../store/database.js';
import type { InstallationId } from '../store/keys.js';
import { leaseFree } from '../store/lease.js';
import { PACE_HORIZON_MS } from '../store/pace.js';
import type { Tables } from '../store/schema.js';

export type WatchedInvoiceRow = Selectable<Tables['watched_invoices']>;

/** A claimed check with its invoice's pending and active watches, read with the claim, in the order of their ids. */
export type ClaimedCheck = WatchedInvoiceRow & { watches: readonly Selectable<Tables['watches']>[] };

/** What a check that changed nothing records: when the next falls due, and the invoice as read (or why it was not). */
export type CheckRecord = Pick<WatchedInvoiceRow, 'next_poll_at' | 'failures' | 'failing_since'> &
  Partial<Pick<WatchedInvoiceRow, 'snapshot'>>;

/** While several installations have checks due, the most of one installation's checks an instance runs at once. */
const SHARED_SLOTS = 2;

/** A claim reads and leases again at most this often when other instances took what it chose. */
const CLAIM_ROUNDS = 4;

/** One claim of due checks: what `claimDue` was asked for, and its horizon. */
interface CheckClaim {
  owner: string;
  now: number;
  limit: number;
  leaseMs: number;
  /** This instance's checks still running, by installation. */
  busy: ReadonlyMap<string, number>;
  /** Each key's background calls this far apart, all instances together; none: not paced. */
  paceMs: number | undefined;
  /** `now + PACE_HORIZON_MS`: a key whose next free call is past it has none of its checks taken. */
  horizon: number;
}

/**
 * Each installation's due checks numbered oldest first (its turns), every installation's
 * first turn before anyone's second, with its key's next free slot; enough of them for the
 * walk below, which skips rows of installations already at their room. A key whose next
 * free call is past the horizon has none of its checks numbered.
 */
const candidates = ({ db }: Store, { now, horizon, busy }: CheckClaim, room: number) =>
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
const lease = (
  store: Store,
  { owner, now, leaseMs }: CheckClaim,
  chosen: { installation_id: InstallationId; invoice_id: string }[],
) =>
  store.db
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

/** Makes a claim (`claimDue`): rounds of choosing due checks and leasing them, each installation within its room. */
async function claimChecks(store: Store, claim: CheckClaim): Promise<WatchedInvoiceRow[]> {
  const { now, limit, busy, paceMs, horizon } = claim;
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
    const rows = await candidates(store, claim, limit - claimed.length);
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
    const leased = await lease(store, claim, chosen);
    claimed.push(...leased);
    if (leased.length === chosen.length) break;
  }
  // RETURNING has no order of its own: the longest overdue first.
  return claimed.sort((x, y) => x.next_poll_at - y.next_poll_at);
}

/**
 * The checks across installations: claiming due ones, what a claim's checks decide from and
 * record, giving one back, and the counts for the metrics. No query here is one installation's.
 */
export function checkClaims(store: Store) {
  const { db } = store;
  return {
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
      return claimChecks(store, { owner, now, limit, leaseMs, busy, paceMs, horizon });
    },

    /** The pending and active watches of claimed checks' invoices, in one read: what each check decides from. */
    async withWatches(rows: readonly WatchedInvoiceRow[]): Promise<ClaimedCheck[]> {
      if (rows.length === 0) return [];
      const found = await db
        .selectFrom('watches')
        .selectAll()
        .where('state', 'in', ['pending', 'active'])
        .where(({ eb, refTuple, tuple }) =>
          eb(
            refTuple('installation_id', 'invoice_id'),
            'in',
            rows.map((r) => tuple(r.installation_id, r.invoice_id)),
          ),
        )
        .orderBy('id')
        .execute();
      const of = new Map<string, (typeof found)[number][]>();
      for (const w of found) {
        const key = `${w.installation_id}\n${w.invoice_id}`;
        of.set(key, [...(of.get(key) ?? []), w]);
      }
      return rows.map((r) => ({ ...r, watches: of.get(`${r.installation_id}\n${r.invoice_id}`) ?? [] }));
    },

    /**
     * Records checks that changed nothing, in one statement, each releasing its lease only while
     * its claim's token still holds it; resolves, in order, whether each was recorded.
     */
    async completeMany(
      done: readonly { row: WatchedInvoiceRow; owner: string; values: CheckRecord }[],
    ): Promise<boolean[]> {
      if (done.length === 0) return [];
      // Typed for PostgreSQL (a bare parameter in VALUES is text); SQLite reads the same words.
      const rows = done.map(
        ({ row, owner, values }) =>
          sql`(cast(${row.installation_id} as text), cast(${row.invoice_id} as text), cast(${owner} as text), cast(${values.snapshot ?? null} as text), cast(${values.next_poll_at} as bigint), cast(${values.failures} as bigint), cast(${values.failing_since} as bigint))`,
      );
      const { rows: recorded } = await sql<{ installation_id: string; invoice_id: string }>`
        with v (installation_id, invoice_id, owner, snapshot, next_poll_at, failures, failing_since) as (values ${sql.join(rows)})
        update watched_invoices
        set snapshot = coalesce(v.snapshot, watched_invoices.snapshot),
          next_poll_at = v.next_poll_at, failures = v.failures, failing_since = v.failing_since,
          lease_owner = null, lease_until = null
        from v
        where watched_invoices.installation_id = v.installation_id
          and watched_invoices.invoice_id = v.invoice_id
          and watched_invoices.lease_owner = v.owner
        returning watched_invoices.installation_id, watched_invoices.invoice_id`.execute(db);
      const kept = new Set(recorded.map((r) => `${r.installation_id}\n${r.invoice_id}`));
      return done.map(({ row }) => kept.has(`${row.installation_id}\n${row.invoice_id}`));
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

    countAllActive: async () => {
      const { n } = await db
        .selectFrom('watches')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('state', '=', 'active')
        .executeTakeFirstOrThrow();
      return Number(n);
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
  };
}

/** A check's record, in its installation's transaction. */
export function checkQueries(installation: InstallationId) {
  const invoices = (trx: Kysely<Tables>) =>
    trx.updateTable('watched_invoices').where('installation_id', '=', installation);

  return {
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
  };
}
