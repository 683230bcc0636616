import type { Kysely, Selectable } from 'kysely';
import { claimFairly } from '../runner/fair-claim.js';
import { freeAt, leasing, nextFreeAt, type Queue, releasing, writeHeld } from '../runner/leases.js';
import type { Store } from '../store/database.js';
import type { InstallationId } from '../store/keys.js';
import { PACE_HORIZON_MS } from '../store/pace.js';
import { prepared } from '../store/prepared.js';
import type { Tables } from '../store/schema.js';

export type WatchedInvoiceRow = Selectable<Tables['watched_invoices']>;

/** A claimed check with its invoice's pending and active watches, read with the claim, in the order of their ids. */
export type ClaimedCheck = WatchedInvoiceRow & { watches: readonly Selectable<Tables['watches']>[] };

/** What a check that changed nothing records: when the next falls due, and the invoice as read (or why it was not). */
export type CheckRecord = Pick<WatchedInvoiceRow, 'next_poll_at' | 'failures' | 'failing_since'> &
  Partial<Pick<WatchedInvoiceRow, 'snapshot'>>;

/** The watched invoices, as the runner leases them: one check each, due at `next_poll_at`. */
export const CHECKS: Queue<'watched_invoices'> = {
  table: 'watched_invoices',
  key: ['installation_id', 'invoice_id'],
  due: 'next_poll_at',
};

/** Records checks that changed nothing: their reading and next check, their leases let go. */
const recordChecks = releasing(
  CHECKS,
  {
    installation_id: 'text',
    invoice_id: 'text',
    snapshot: 'text',
    next_poll_at: 'bigint',
    failures: 'bigint',
    failing_since: 'bigint',
  },
  ['snapshot'],
);

/** While several installations have checks due, the most of one installation's checks an instance runs at once. */
const SHARED_SLOTS = 2;

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
 * walk (`claimFairly`), which skips rows of installations already at their room. A key whose next
 * free call is past the horizon has none of its checks numbered.
 */
const candidates = (store: Store, { now, horizon, busy }: CheckClaim, room: number) =>
  dueCandidates(store.db, { now, horizon, room, limit: (room + busy.size) * (SHARED_SLOTS + 1) }).then(
    (r) => r.rows,
  );

const dueCandidates = prepared(
  (db, { now, horizon, room, limit }: Record<'now' | 'horizon' | 'room' | 'limit', number>) =>
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
          .where(freeAt('w', now))
          .where((w) => w.or([w('p.next_slot_at', 'is', null), w('p.next_slot_at', '<', horizon)]))
          .as('d'),
      )
      .selectAll()
      .where('turn', '<=', room)
      .orderBy('turn')
      .orderBy('next_poll_at')
      .orderBy('installation_id')
      .limit(limit),
);

/** Leases the chosen checks still due and free: another instance may have been quicker. */
const leaseChecks = leasing(
  CHECKS,
  'watched_invoices',
  (db, { chosen, now }: { chosen: { installation_id: InstallationId; invoice_id: string }[]; now: number }) =>
    db
      .selectFrom('watched_invoices')
      .select(['installation_id', 'invoice_id'])
      .where(({ eb, refTuple, tuple }) =>
        eb(
          refTuple('installation_id', 'invoice_id'),
          'in',
          chosen.map((c) => tuple(c.installation_id, c.invoice_id)),
        ),
      )
      .where('next_poll_at', '<=', now),
);

const lease = (
  store: Store,
  { owner, now, leaseMs }: CheckClaim,
  chosen: { installation_id: InstallationId; invoice_id: string }[],
) =>
  leaseChecks(
    store.db,
    { chosen: chosen.map((c) => ({ installation_id: c.installation_id, invoice_id: c.invoice_id })), now },
    { owner, until: now + leaseMs },
    now,
  );

/** The pending and active watches of the invoices `keys` name, in the order of their ids. */
const watchesOf = prepared((db, keys: { installation_id: InstallationId; invoice_id: string }[]) =>
  db
    .selectFrom('watches')
    .selectAll()
    .where('state', 'in', ['pending', 'active'])
    .where(({ eb, refTuple, tuple }) =>
      eb(
        refTuple('installation_id', 'invoice_id'),
        'in',
        keys.map((k) => tuple(k.installation_id, k.invoice_id)),
      ),
    )
    .orderBy('id'),
);

/** Makes a claim (`claimDue`): due checks shared fairly, each installation within its room and its key's pace. */
async function claimChecks(store: Store, claim: CheckClaim): Promise<WatchedInvoiceRow[]> {
  const { now, limit, busy, paceMs, horizon } = claim;
  /** The calls the key can start before the horizon, all instances together. */
  const paced = (nextSlotAt: number | null) =>
    paceMs === undefined
      ? Number.POSITIVE_INFINITY
      : Math.ceil((horizon - Math.max(Number(nextSlotAt ?? now), now)) / paceMs);
  const claimed = await claimFairly({
    limit,
    busy,
    candidates: (room) => candidates(store, claim, room),
    room: (c, several) => Math.min(several ? SHARED_SLOTS : Number.POSITIVE_INFINITY, paced(c.next_slot_at)),
    lease: (chosen) => lease(store, claim, chosen),
    tag: (row) => `${row.installation_id}\n${row.invoice_id}`,
  });
  // The longest overdue first.
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
      const keys = rows.map((r) => ({ installation_id: r.installation_id, invoice_id: r.invoice_id }));
      const { rows: found } = await watchesOf(db, keys);
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
    completeMany: (
      done: readonly { row: WatchedInvoiceRow; owner: string; values: CheckRecord }[],
    ): Promise<boolean[]> => recordChecks(db, done),

    /** When the next check not leased to anyone falls due. */
    nextDueAt: (now: number): Promise<number | undefined> =>
      nextFreeAt(CHECKS, db.selectFrom('watched_invoices'), now),

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
  };
}

/**
 * Records a check of `installation`'s invoice and releases the lease, only while `owner` still
 * holds it: an instance whose lease ran out (it stalled, another took over) cannot write a stale
 * decision.
 */
export function completeCheck(
  trx: Kysely<Tables>,
  installation: InstallationId,
  owner: string,
  invoiceId: string,
  values: CheckValues,
): Promise<boolean> {
  return writeHeld(trx, CHECKS, { installation_id: installation, invoice_id: invoiceId }, owner, values);
}

/** What a check writes of its invoice's row. */
export type CheckValues = Pick<WatchedInvoiceRow, 'next_poll_at' | 'failures'> &
  Partial<Pick<WatchedInvoiceRow, 'snapshot' | 'failing_since'>>;
