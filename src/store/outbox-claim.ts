import type { ExpressionBuilder, Selectable } from 'kysely';
import type { Store } from './database.js';
import { leaseFree } from './lease.js';
import type { Tables } from './schema.js';

type OutboxRow = Selectable<Tables['outbox']>;

/** While several installations have messages due, the most of one installation's messages an instance delivers at once (of the outbox's four). */
const OUTBOX_SHARED_SLOTS = 2;

/** A claim reads and leases again at most this often when other instances took what it chose. */
const CLAIM_ROUNDS = 4;

/**
 * The head of its lane (`o`): no message decided before it in the same lane waits. A lane (an
 * installation's channel) delivers in order, one message at a time.
 */
const headOfLane = ({ not, exists, selectFrom }: ExpressionBuilder<Tables & { o: Tables['outbox'] }, 'o'>) =>
  not(
    exists(
      selectFrom('outbox as earlier')
        .select('earlier.id')
        .whereRef('earlier.lane', '=', 'o.lane')
        .where('earlier.done_at', 'is', null)
        .whereRef('earlier.id', '<', 'o.id'),
    ),
  );

interface OutboxClaim {
  owner: string;
  now: number;
  limit: number;
  leaseMs: number;
  /** This instance's messages still being delivered, by installation. */
  busy: ReadonlyMap<string, number>;
}

/**
 * Takes up to `limit` messages due for delivery, leased to `owner` until `now + leaseMs`: only
 * the head of each lane, so a channel's messages go out in order, one at a time. Shared between
 * installations as watch checks are (src/watches/queries.ts): each installation's heads numbered
 * oldest first (its turns), every installation's first turn before anyone's second, so one
 * workspace's backlog does not hold back another's single message. While several installations
 * have messages due, none holds more than OUTBOX_SHARED_SLOTS of this instance's deliveries at
 * once (`busy` counted). Returned in that order: turn by turn, oldest first within a turn.
 */
export async function claimOutbox(store: Store, claim: OutboxClaim): Promise<OutboxRow[]> {
  const { db } = store;
  const { owner, now, limit, leaseMs, busy } = claim;
  /** The lanes' heads due now, numbered by turn; enough for the walk below, which skips installations at their share. */
  const candidates = (room: number) =>
    db
      .selectFrom((eb) =>
        eb
          .selectFrom('outbox as o')
          .select((eb) => [
            'o.id',
            'o.installation_id',
            eb.fn
              .agg<number>('row_number')
              .over((ob) => ob.partitionBy('o.installation_id').orderBy('o.id'))
              .as('turn'),
          ])
          .where('o.done_at', 'is', null)
          .where('o.next_attempt_at', '<=', now)
          .where(leaseFree('o.lease_until', now))
          .where(headOfLane)
          .as('d'),
      )
      .selectAll()
      .where('turn', '<=', room)
      .orderBy('turn')
      .orderBy('id')
      .limit((room + busy.size) * (OUTBOX_SHARED_SLOTS + 1))
      .execute();
  /** Leases the chosen messages still free and still heads: another instance may have been quicker. */
  const lease = (ids: number[]) =>
    db
      .updateTable('outbox')
      .set({ lease_owner: owner, lease_until: now + leaseMs })
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('outbox as o')
          .select('o.id')
          .where('o.id', 'in', ids)
          .where('o.done_at', 'is', null)
          .where('o.next_attempt_at', '<=', now)
          .where(leaseFree('o.lease_until', now))
          .where(headOfLane)
          .$if(store.dialect === 'postgres', (q) => q.forUpdate().skipLocked()),
      )
      .returningAll()
      .execute();

  const claimed: OutboxRow[] = [];
  /** Each chosen message's place in the order the walks chose them. */
  const place = new Map<number, number>();
  let several = false;
  // Two statements a round; another round only for what other instances took meanwhile.
  for (let round = 0; round < CLAIM_ROUNDS && claimed.length < limit; round += 1) {
    /** This claim's messages of each installation so far, and this instance's still in flight. */
    const taken = new Map(busy);
    for (const r of claimed) taken.set(r.installation_id, (taken.get(r.installation_id) ?? 0) + 1);
    const rows = await candidates(limit - claimed.length);
    const first = rows[0]?.installation_id;
    several ||= rows.some((c) => c.installation_id !== first);
    const chosen: number[] = [];
    for (const c of rows) {
      if (claimed.length + chosen.length === limit) break;
      const mine = taken.get(c.installation_id) ?? 0;
      if (several && mine >= OUTBOX_SHARED_SLOTS) continue;
      taken.set(c.installation_id, mine + 1);
      place.set(c.id, place.size);
      chosen.push(c.id);
    }
    if (chosen.length === 0) break;
    const leased = await lease(chosen);
    claimed.push(...leased);
    if (leased.length === chosen.length) break;
  }
  // RETURNING has no order of its own.
  return claimed.sort((a, b) => (place.get(a.id) ?? 0) - (place.get(b.id) ?? 0));
}
