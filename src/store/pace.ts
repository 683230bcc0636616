import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { coalesce } from './coalesce.js';
import type { Store } from './database.js';
import type { InstallationId } from './keys.js';
import { prepared } from './prepared.js';

/**
 * How far ahead a key's next free call may be for its checks to be claimed: a claimed check
 * waits at most about this long for its turn, not a lease's worth.
 */
export const PACE_HORIZON_MS = 1000;

/**
 * How late after its slot a call may still start. A timer that fires late (a busy event loop) or
 * a slow reservation would bring a call closer to the next one than the pace; past this, the call
 * gives its slot up and takes the next free one.
 */
export const PACE_SLACK_MS = 100;

/**
 * A key's next free slot further ahead than this is no slot its own calls took: the clock was
 * stepped back (an NTP correction) since it was reserved. It is taken as free now, so a clock
 * stepped back ten minutes does not hold background work for ten minutes. (Claims take a key's
 * checks only while its next slot is under a second away: its calls never reserve this far.)
 */
export const PACE_STEPPED_BACK_MS = 60_000;

/**
 * What a call's way to the service may add after it started, more to one call than to another: a
 * busy event loop before its request is written, a connection opened first, the network, a
 * service slow to read what arrived. The service counts calls as they arrive. The benchmark, on
 * two cores shared by three instances, PostgreSQL and the service, measured 6 calls arriving
 * within 943 ms from slots 1,150 ms apart: 207 ms of the slots' span lost on the way, against
 * the 150 ms the slack and a margin of 50 allowed.
 */
export const PACE_MARGIN_MS = 150;

/**
 * A call late past the slack tries this many slots in all; late on the last too, it is not made
 * (a loop that busy, or a store that slow, is the bigger problem), never made late.
 */
const PACE_TURNS = 3;

/**
 * Milliseconds between two background calls of one key: `perSecond` of them, each started up to
 * PACE_SLACK_MS late and on its way up to PACE_MARGIN_MS longer than another, never arrive within
 * one second (whatever second is counted).
 */
export const paceInterval = (perSecond: number): number =>
  Math.ceil((1000 + PACE_SLACK_MS + PACE_MARGIN_MS) / perSecond);

/** `reserveSlots`'s statement: for each installation, its slots' span past its next free one. */
const reserving = prepared(
  (
    _db,
    {
      wanted,
      now,
      steppedBack,
    }: { wanted: { id: InstallationId; span: number }[]; now: number; steppedBack: number },
  ) => {
    // Typed for PostgreSQL (a bare parameter in VALUES is text); SQLite reads the same words.
    const rows = wanted.map(({ id, span }) => sql`(cast(${id} as text), cast(${span} as bigint))`);
    const next = sql.ref('background_pace.next_slot_at');
    // SQLite needs the WHERE of an upsert's SELECT to tell its ON CONFLICT from a join's ON.
    return sql<{ installation_id: InstallationId; next_slot_at: number }>`
      with wanted (installation_id, span) as (values ${sql.join(rows)})
      insert into background_pace (installation_id, next_slot_at)
      select installations.id, cast(${now} as bigint) + wanted.span
      from installations join wanted on wanted.installation_id = installations.id
      where true
      on conflict (installation_id) do update set next_slot_at =
        (case when ${next} > ${now} and ${next} <= ${steppedBack} then ${next} else ${now} end)
        + (excluded.next_slot_at - ${now})
      returning installation_id, next_slot_at`;
  },
);

/**
 * Reserves background calls of many installations in one statement, all instances together: for
 * each, `count` slots `intervalMs` apart from its key's next free one (`max(next, now)`; now when
 * next is past what a key's own calls could have reserved: the clock was stepped back), only
 * while the installation is stored (an upsert the database serializes per row). Resolves with each
 * one's first reserved slot; one no longer stored is missing (nothing to pace: its call goes now).
 */
async function reserveSlots(
  store: Store,
  wanted: ReadonlyMap<InstallationId, number>,
  now: number,
  intervalMs: number,
): Promise<Map<InstallationId, number>> {
  const { rows: reserved } = await reserving(store.db, {
    wanted: [...wanted].map(([id, count]) => ({ id, span: count * intervalMs })),
    now,
    steppedBack: now + PACE_STEPPED_BACK_MS,
  });
  return new Map(
    reserved.map((r) => [
      r.installation_id,
      Number(r.next_slot_at) - (wanted.get(r.installation_id) ?? 0) * intervalMs,
    ]),
  );
}

/** Reserves one installation's next background call (`reserveSlots` for one). */
export async function reserveSlot(
  store: Store,
  installation: InstallationId,
  now: number,
  intervalMs: number,
): Promise<number> {
  return (await reserveSlots(store, new Map([[installation, 1]]), now, intervalMs)).get(installation) ?? now;
}

/** How long reservations wait for others to share their statement, at most. */
const RESERVE_WINDOW_MS = 5;
/** The most reservations one statement makes. */
const RESERVE_MAX = 500;

/**
 * Every installation's background budget (PAYMENT_API_BACKGROUND_RPS) as a pace for its payments
 * client: each call reserves its key's next slot in the store and waits for it, so the key's
 * calls start `paceInterval(perSecond)` ms apart, give or take PACE_SLACK_MS, whichever instance
 * makes them. Calls that ask at about the same time (a claim's checks) reserve in one statement.
 *
 * A call never starts later than the slack after its slot: one that would takes the next free
 * slot, PACE_TURNS times at most, within its `deadline`. Going late would bring it closer to the
 * key's next call than the budget allows. The pace resolves true when the call may go, false
 * when it had no turn in time and is not to be made.
 */
export function sharedPaces(
  store: Store,
  perSecond: number,
  clock: () => number = Date.now,
  wait: (ms: number, deadline?: AbortSignal) => Promise<unknown> = (ms, deadline) =>
    sleep(ms, undefined, deadline ? { signal: deadline } : {}),
): (installation: InstallationId) => (deadline?: AbortSignal) => Promise<boolean> {
  const intervalMs = paceInterval(perSecond);
  const reserve = coalesce<InstallationId, number>({
    windowMs: RESERVE_WINDOW_MS,
    max: RESERVE_MAX,
    async flush(installations) {
      const wanted = new Map<InstallationId, number>();
      for (const id of installations) wanted.set(id, (wanted.get(id) ?? 0) + 1);
      const first = await reserveSlots(store, wanted, clock(), intervalMs);
      // The n-th call of an installation in the statement takes its n-th slot.
      const taken = new Map<InstallationId, number>();
      return installations.map((id) => {
        const n = taken.get(id) ?? 0;
        taken.set(id, n + 1);
        return (first.get(id) ?? clock()) + n * intervalMs;
      });
    },
  });
  /** Waits `ms`, or until the deadline ends the wait. */
  const waitFor = async (ms: number, deadline: AbortSignal | undefined) => {
    try {
      await wait(ms, deadline);
    } catch (error) {
      if (!deadline?.aborted) throw error;
    }
  };
  return (installation) => async (deadline) => {
    // No slot is taken for a call whose deadline has ended: it would hold the key's next call back for nothing.
    for (let turn = 0; turn < PACE_TURNS && !deadline?.aborted; turn += 1) {
      const slot = await reserve(installation);
      // A timer may fire a little early by the wall clock: wait again until the slot has come.
      let now = clock();
      for (; now < slot && !deadline?.aborted; now = clock()) await waitFor(slot - now, deadline);
      if (now - slot <= PACE_SLACK_MS && !deadline?.aborted) return true;
    }
    return false;
  };
}
