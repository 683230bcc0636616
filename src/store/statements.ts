import type { SqliteDatabase, SqliteStatement } from 'kysely';

/** Statements kept prepared: more than the bot's distinct queries, bounded for `IN` lists of every length. */
const KEPT_STATEMENTS = 500;

/**
 * The database with its statements prepared once and kept, the least recently used let go past
 * `max`. Kysely's SQLite driver prepares every statement it runs, and SQLite's preparing (parse
 * and plan) is synchronous work on the only thread every request waits for: about a tenth of the
 * bot's CPU under load, for statements it runs a thousand times. A kept statement sees schema
 * changes (SQLite prepares it again itself) and runs one call at a time, as everything on
 * this connection does.
 */
export function keptStatements(database: SqliteDatabase, max = KEPT_STATEMENTS): SqliteDatabase {
  const kept = new Map<string, SqliteStatement>();
  return {
    prepare(sql: string): SqliteStatement {
      const statement = kept.get(sql) ?? database.prepare(sql);
      // Map keeps insertion order: deleting and setting again makes this the newest.
      kept.delete(sql);
      kept.set(sql, statement);
      if (kept.size > max) kept.delete(kept.keys().next().value as string);
      return statement;
    },
    close() {
      kept.clear();
      database.close();
    },
  };
}
