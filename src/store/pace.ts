import { setTimeout as sleep } from 'node:timers/promises';
import type { Store } from './database.js';
import { whileInstalled } from './installed.js';

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

/** A call late past the slack tries this many slots in all, then goes: a loop that busy is the bigger problem. */
const PACE_TURNS = 3;

/**
 * Milliseconds between two background calls of one key: `perSecond` of them, each started up to
 * PACE_SLACK_MS late, never fall within one second (whatever second is counted).
 */
export const paceInterval = (perSecond: number): number => Math.ceil((1000 + PACE_SLACK_MS) / perSecond);

/**
 * Reserves an installation's next background call, all instances together: its key's next free
 * slot is `max(next, now)` and the one after it `intervalMs` later, in one statement (an upsert
 * the database serializes per row), only while the installation is stored. Resolves with the
 * reserved slot's time (`now` for an installation no longer stored).
 */
export async function reserveSlot(
  store: Store,
  installation: string,
  now: number,
  intervalMs: number,
): Promise<number> {
  const reserved = await store.db
    .insertInto('background_pace')
    .columns(['installation_id', 'next_slot_at'])
    // Only while the installation is there: a call in flight during an uninstall re-creates nothing.
    .expression(whileInstalled(store.db, installation, installation, now + intervalMs))
    .onConflict((oc) =>
      oc.column('installation_id').doUpdateSet((eb) => {
        const next = eb.ref('background_pace.next_slot_at');
        // max(next, now), in words both databases know; now, when next is past what a key's own
        // calls could have reserved (the clock was stepped back).
        const free = eb
          .case()
          .when(eb.and([eb(next, '>', now), eb(next, '<=', now + PACE_STEPPED_BACK_MS)]))
          .then(next)
          .else(eb.val(now))
          .end();
        return { next_slot_at: eb(free, '+', intervalMs) };
      }),
    )
    .returning('next_slot_at')
    .executeTakeFirst();
  // Uninstalled meanwhile: nothing to pace, the call goes at once (and finds nothing to act on).
  return reserved ? Number(reserved.next_slot_at) - intervalMs : now;
}

/**
 * An installation's background budget (PAYMENT_API_BACKGROUND_RPS) as a pace for its payments
 * client: each call reserves its key's next slot in the store and waits for it, so the key's
 * calls start `paceInterval(perSecond)` ms apart, give or take PACE_SLACK_MS, whichever instance
 * makes them.
 */
export function sharedPace(
  store: Store,
  installation: string,
  perSecond: number,
  clock: () => number = Date.now,
  wait: (ms: number) => Promise<unknown> = sleep,
): () => Promise<void> {
  const intervalMs = paceInterval(perSecond);
  return async () => {
    for (let turn = 1; ; turn += 1) {
      const slot = await reserveSlot(store, installation, clock(), intervalMs);
      // A timer may fire a little early by the wall clock: wait again until the slot has come.
      let now = clock();
      for (; now < slot; now = clock()) await wait(slot - now);
      if (now - slot <= PACE_SLACK_MS || turn === PACE_TURNS) return;
    }
  };
}
