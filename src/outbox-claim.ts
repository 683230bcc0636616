import type { ExpressionBuilder, Selectable } from 'kysely';
import { claimFairly } from './runner/fair-claim.js';
import { freeAt, leasing, type Queue } from './runner/leases.js';
import type { Store } from './store/database.js';
import { prepared } from './store/prepared.js';
import type { Tables } from './store/schema.js';

type OutboxRow = Selectable<Tables['outbox']>;

/** While several installations have messages due, the most of one installation's messages an instance delivers at once (of the outbox's four). */
const OUTBOX_SHARED_SLOTS = 2;

/** The outbox as the runner leases it: one delivery a row, due at `next_attempt_at`. */
export const OUTBOX: Queue<'outbox'> = { table: 'outbox', key: ['id'], due: 'next_attempt_at' };

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

/** Leases the chosen messages still due and still heads of their lanes. */
const leaseHeads = leasing(OUTBOX, 'o', (db, { ids, now }: { ids: number[]; now: number }) =>
  db
    .selectFrom('outbox as o')
    .select('o.id')
    .where('o.id', 'in', ids)
    .where('o.done_at', 'is', null)
    .where('o.next_attempt_at', '<=', now)
    .where(headOfLane),
);

/** The lanes' heads due at `now`, each installation's numbered by turn, those within `room`. */
const dueHeads = prepared((db, { now, room, limit }: Record<'now' | 'room' | 'limit', number>) =>
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
        .where(freeAt('o', now))
        .where(headOfLane)
        .as('d'),
    )
    .selectAll()
    .where('turn', '<=', room)
    .orderBy('turn')
    .orderBy('id')
    .limit(limit),
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
 * installations as watch checks are (`claimFairly`, src/runner/fair-claim.ts): each installation's heads numbered
 * oldest first (its turns), every installation's first turn before anyone's second, so one
 * workspace's backlog does not hold back another's single message. While several installations
 * have messages due, none holds more than OUTBOX_SHARED_SLOTS of this instance's deliveries at
 * once (`busy` counted). Returned in that order: turn by turn, oldest first within a turn.
 */
export async function claimOutbox(store: Store, claim: OutboxClaim): Promise<OutboxRow[]> {
  const { db } = store;
  const { owner, now, limit, leaseMs, busy } = claim;
  /** The lanes' heads due now, numbered by turn; enough for the walk, which skips installations at their share. */
  const candidates = async (room: number) =>
    (await dueHeads(db, { now, room, limit: (room + busy.size) * (OUTBOX_SHARED_SLOTS + 1) })).rows;
  return claimFairly({
    limit,
    busy,
    candidates,
    room: (_, several) => (several ? OUTBOX_SHARED_SLOTS : Number.POSITIVE_INFINITY),
    lease: (chosen) =>
      leaseHeads(db, { ids: chosen.map((c) => c.id), now }, { owner, until: now + leaseMs }, now),
    tag: (row) => String(row.id),
  });
}
