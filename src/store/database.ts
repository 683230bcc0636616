import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import Database from 'libsql';
import pg from 'pg';
import type { DatabaseLocation } from '../config.js';
import { migrationProvider } from './migrations.js';
import type { Tables } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

/**
 * The store: one set of queries (Kysely) over SQLite or PostgreSQL. Everything the bot must
 * not forget across a restart (watches, what was announced, feed snapshots) lives here.
 */
export interface Store {
  readonly db: Kysely<Tables>;
  readonly dialect: Dialect;
  /**
   * Runs `work` in one transaction. On SQLite it takes the write lock at once (`BEGIN
   * IMMEDIATE`), so a read-then-write transaction never fails halfway for a lock.
   */
  transaction<T>(work: (trx: Kysely<Tables>) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Why the store could not be opened, naming DATABASE_URL and never its password. */
export class StoreError extends Error {
  override readonly name = 'StoreError';
}

/** Where a location points, for messages: the file, or the server and database without credentials. */
export function describeLocation(location: DatabaseLocation): string {
  if (location.kind === 'sqlite') return `SQLite file ${resolve(location.path)}`;
  const url = new URL(location.url);
  return `PostgreSQL at ${url.hostname}:${url.port || 5432}${url.pathname}`;
}

function sqlite(path: string): Kysely<Tables> {
  mkdirSync(dirname(resolve(path)), { recursive: true });
  const database = new Database(path);
  // WAL lets readers run beside the writer; FULL makes every commit survive a crash of the
  // process or the machine; the busy timeout waits out another writer instead of failing.
  database.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;');
  return new Kysely<Tables>({ dialect: new SqliteDialect({ database }) });
}

/** int8 (bigint) columns hold epoch milliseconds and counters: read them as numbers, not strings. */
const INT8_OID = 20;

function postgres(url: string): Kysely<Tables> {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: 10_000,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  return new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
}

export async function openStore(location: DatabaseLocation): Promise<Store> {
  const where = describeLocation(location);
  let db: Kysely<Tables>;
  try {
    db = location.kind === 'sqlite' ? sqlite(location.path) : postgres(location.url);
  } catch (error) {
    throw new StoreError(`could not open the ${where} named by DATABASE_URL: ${reason(error)}`, {
      cause: error,
    });
  }
  const dialect: Dialect = location.kind;
  try {
    const { error } = await new Migrator({ db, provider: migrationProvider(dialect) }).migrateToLatest();
    if (error) throw error;
  } catch (error) {
    await db.destroy().catch(() => undefined);
    throw new StoreError(`could not prepare the ${where} named by DATABASE_URL: ${reason(error)}`, {
      cause: error,
    });
  }

  return {
    db,
    dialect,
    transaction(work) {
      if (dialect === 'postgres') return db.transaction().execute(work);
      return db.connection().execute(async (connection) => {
        await sql`begin immediate`.execute(connection);
        try {
          const result = await work(connection);
          await sql`commit`.execute(connection);
          return result;
        } catch (error) {
          await sql`rollback`.execute(connection);
          throw error;
        }
      });
    },
    close: () => db.destroy(),
  };
}

/** An error's own words, without anything that could carry a URL with its password. */
function reason(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && !error.message ? code : error.message;
  }
  return String(error);
}
