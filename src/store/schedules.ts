import { sql } from 'kysely';
import type { Store } from './database.js';
import { periodic } from './periodic.js';

/** How often a job looks for times its own schedule could not have written. */
const LOOK_EVERY_MS = 60_000;

/** A table's time of next work, and how far ahead of now its own schedule ever puts it. */
interface Schedule {
  table: 'watched_invoices' | 'singletons' | 'outbox';
  column: 'next_poll_at' | 'next_run_at' | 'next_attempt_at';
  maxAheadMs: number;
}

/**
 * Times are absolute (epoch ms): when the clock is stepped back (an NTP correction of ten
 * minutes), work scheduled a step ahead by the clock before would wait ten minutes longer. A
 * time further ahead than its schedule ever puts one was written by a clock that has since gone
 * back: it is pulled back to now. Looked at once a minute, and at once when the clock went back
 * past the last look; resolves with how many were pulled back.
 */
export function stepBackGuard(store: Store, schedule: Schedule): (now: number) => Promise<number> {
  const look = periodic(LOOK_EVERY_MS);
  const { table, column, maxAheadMs } = schedule;
  return async (now) => {
    if (!look.due(now)) return 0;
    const result =
      await sql`update ${sql.table(table)} set ${sql.ref(column)} = ${now} where ${sql.ref(column)} > ${now + maxAheadMs}`.execute(
        store.db,
      );
    return Number(result.numAffectedRows ?? 0n);
  };
}
