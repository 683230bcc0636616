import type { Store } from './database.js';

/** How long an event id is remembered: Slack's last retry comes about 5 minutes after the first try. */
const REMEMBER_EVENTS_MS = 60 * 60_000;

/**
 * True the first time `key` is seen, by any instance; false for a repeat (a Slack retry of an
 * event already handled). Ids older than an hour are forgotten on the way.
 */
export async function firstSight(store: Store, key: string, now: number): Promise<boolean> {
  await store.db
    .deleteFrom('seen_events')
    .where('seen_at', '<', now - REMEMBER_EVENTS_MS)
    .execute();
  const result = await store.db
    .insertInto('seen_events')
    .values({ id: key, seen_at: now })
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}
