import { sql } from 'kysely';
import type { Store } from './database.js';
import { periodic } from './periodic.js';

/** How often a job deletes what ended more than the retention ago. */
const PRUNE_EVERY_MS = 60 * 60_000;

/** The most rows one statement deletes: a long backlog goes in several, each short. */
export const PRUNE_BATCH = 1000;

/**
 * The most statements one call makes: a backlog of years (the first start after an upgrade) is
 * deleted over the next claims, never holding one claim (and its checks) for long.
 */
export const PRUNE_BATCHES_PER_CALL = 10;

/** Tables of things that end (state 'ended', with `ended_at`), kept ENDED_RETENTION_DAYS after. */
export type EndingTable = 'watches' | 'feed_subscriptions';

/**
 * Deletes the rows of `table` that ended more than `retentionDays` ago (ENDED_RETENTION_DAYS).
 * Run by a periodic job at each claim, it works once an hour per instance (at once after the
 * clock went back). On PostgreSQL each batch takes only rows no other instance is deleting
 * (`FOR UPDATE SKIP LOCKED`): instances doing it at the same moment never wait on each other
 * nor delete a row twice. Resolves with how many rows it deleted.
 */
export function pruneEnded(
  store: Store,
  table: EndingTable,
  retentionDays: number,
): (now: number) => Promise<number> {
  const hourly = periodic(PRUNE_EVERY_MS);
  const skipLocked = store.dialect === 'postgres' ? sql` for update skip locked` : sql``;
  return async (now) => {
    if (!hourly.due(now)) return 0;
    const before = now - retentionDays * 86_400_000;
    let deleted = 0;
    for (let batch = 1; ; batch += 1) {
      const result =
        await sql`delete from ${sql.table(table)} where id in (select id from ${sql.table(table)} where state = 'ended' and ended_at < ${before} limit ${PRUNE_BATCH}${skipLocked})`.execute(
          store.db,
        );
      const n = Number(result.numAffectedRows ?? 0n);
      deleted += n;
      if (n < PRUNE_BATCH) return deleted;
      if (batch === PRUNE_BATCHES_PER_CALL) {
        // More is left: the next claim goes on with it, not an hour later.
        hourly.again();
        return deleted;
      }
    }
  };
}
