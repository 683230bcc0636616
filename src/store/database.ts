import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Kysely, type LogEvent, type Logger, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { type DatabaseClock, databaseClock } from './clock.js';
import { type DatabaseLocation, DEFAULT_POOL_SIZE } from './location.js';
import { type FileLock, holdFile, LockHeldError } from './lock.js';
import { migrationProvider } from './migrations.js';
import type { Dialect, Tables } from './schema.js';
import { keptStatements } from './statements.js';

/**
 * The store: one set of queries (Kysely) over SQLite or PostgreSQL. Everything the bot must
 * not forget across a restart (watches, what was announced, feed snapshots) lives here.
 */
export interface Store {
  readonly db: Kysely<Tables>;
  readonly dialect: Dialect;
  /**
   * The time leases, due times and pacing are kept in (epoch ms): on PostgreSQL the database
   * server's, the same for every instance whatever their own clocks say (src/store/clock.ts); on
   * SQLite this process's, the only one that may open the file.
   */
  readonly now: () => number;
  /**
   * Runs `work` in one transaction. On SQLite it takes the write lock at once (`BEGIN
   * IMMEDIATE`), so a read-then-write transaction never fails halfway for a lock.
   */
  transaction<T>(work: (trx: Kysely<Tables>) => Promise<T>, commit?: Commit): Promise<T>;
  /** Statements sent to the database since the store opened (each one round trip), `begin` and `commit` included. */
  statements(): number;
  close(): Promise<void>;
}

/** How a transaction is committed. */
export interface Commit {
  /**
   * false: the commit returns before the disk has it (PostgreSQL's `synchronous_commit = off`;
   * SQLite's `synchronous = NORMAL`, in WAL mode): a crash of this process loses nothing, a
   * crash of the machine (or of the PostgreSQL server) may lose the last such commits, never
   * another, and the store stays whole. For a write nobody waits on, cheap to lose on a power
   * cut: nothing the bot announces or must not repeat. Default true: the disk has it first.
   */
  synchronous?: boolean;
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

/**
 * SQLite is for one process (src/store/lock.ts): the file is held before it is opened (its
 * directory made first), and a second process is told to use PostgreSQL instead.
 */
async function holdSqlite(path: string, where: string): Promise<FileLock> {
  try {
    mkdirSync(dirname(path), { recursive: true });
    return await holdFile(path);
  } catch (error) {
    if (!(error instanceof LockHeldError)) throw cannotOpen(where, error);
    const { holder, notePath } = error;
    const who = holder
      ? `process ${holder.pid} on ${holder.host} (started ${holder.started}; see ${notePath})`
      : 'another process';
    throw new StoreError(
      `the ${where} named by DATABASE_URL is in use by ${who}. SQLite is for one process; to run several, use PostgreSQL (DATABASE_URL=postgres://…).`,
      { cause: error },
    );
  }
}

/** Counts every statement Kysely sends (its log sees each one, `begin` and `commit` included). */
function counting() {
  let sent = 0;
  const log = (event: LogEvent) => {
    if (event.level === 'query' || event.level === 'error') sent += 1;
  };
  return { log, sent: () => sent };
}

async function sqlite(path: string, log: Logger): Promise<Kysely<Tables>> {
  // Each driver is loaded only by the dialect that uses it: pg's modules are no part of a SQLite
  // bot's start or memory, nor libsql's native library of a PostgreSQL one.
  const { default: Database } = await import('libsql');
  const database = new Database(path);
  // WAL lets readers run beside the writer; FULL makes every commit survive a crash of the
  // process or the machine (all but a transaction's asked otherwise: `Commit`); the busy timeout
  // waits out another writer instead of failing.
  database.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;');
  return new Kysely<Tables>({ dialect: new SqliteDialect({ database: keptStatements(database) }), log });
}

/** int8 (bigint) columns hold epoch milliseconds and counters: read them as numbers, not strings. */
const INT8_OID = 20;

/** Burst of dropped connections told as one: a restart drops every idle connection at once. */
const LOST_TOLD_EVERY_MS = 10_000;

/**
 * node-postgres takes `sslmode=prefer`, `require` and `verify-ca` as `verify-full` (the server's
 * certificate is checked against the system's CAs, or `sslrootcert`), and prints a multi-line
 * SECURITY WARNING to say so at every start. The URL is given the mode it gets anyway: same
 * connection, no warning. `uselibpqcompat=true` keeps libpq's meanings (`require`: encrypted, not
 * verified) as written. docs/postgresql.md.
 */
export function verifiedSslMode(url: string): string {
  const parsed = new URL(url);
  const mode = parsed.searchParams.get('sslmode');
  if (parsed.searchParams.get('uselibpqcompat') === 'true') return url;
  if (mode !== 'prefer' && mode !== 'require' && mode !== 'verify-ca') return url;
  parsed.searchParams.set('sslmode', 'verify-full');
  return parsed.toString();
}

async function postgres(
  url: string,
  poolSize: number,
  onLost: StoreOptions['onLostConnection'],
  log: Logger,
): Promise<Kysely<Tables>> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({
    connectionString: verifiedSslMode(url),
    max: poolSize,
    connectionTimeoutMillis: 10_000,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // The server dropping a connection the pool holds idle (a restart, a failover, a proxy's idle
  // cut, pg_terminate_backend) is an 'error' event of the pool: without a listener it ends the
  // process. The pool has let that connection go already; the next store call opens another, or
  // fails and is retried like any store error until the database is back.
  let toldAt = Number.NEGATIVE_INFINITY;
  pool.on('error', (error) => {
    const now = Date.now();
    if (now - toldAt < LOST_TOLD_EVERY_MS) return;
    toldAt = now;
    onLost?.(error);
  });
  return new Kysely<Tables>({ dialect: new PostgresDialect({ pool }), log });
}

/** Tables whose rows are leased to an instance while it works on them. */
const LEASED = ['watched_invoices', 'outbox', 'feed_subscriptions', 'singletons'] as const;

/**
 * With the SQLite file locked no other process is alive to hold a lease in it: every lease left
 * is a dead process's (kill -9, a crash), so its work is taken over now rather than when the
 * lease runs out. (On PostgreSQL another instance may be alive: leases run out as usual.)
 */
async function releaseLeases(db: Kysely<Tables>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const table of LEASED) {
      await sql`update ${sql.table(table)} set lease_owner = null, lease_until = null where lease_owner is not null`.execute(
        trx,
      );
    }
  });
}

interface StoreOptions {
  /** PostgreSQL dropped connections the pool held (told once per burst): the store goes on. */
  onLostConnection?: (error: Error) => void;
}

export async function openStore(location: DatabaseLocation, options: StoreOptions = {}): Promise<Store> {
  const where = describeLocation(location);
  const lock = location.kind === 'sqlite' ? await holdSqlite(location.path, where) : undefined;
  const count = counting();
  let db: Kysely<Tables>;
  try {
    db =
      location.kind === 'sqlite'
        ? await sqlite(location.path, count.log)
        : await postgres(
            location.url,
            location.poolSize ?? DEFAULT_POOL_SIZE,
            options.onLostConnection,
            count.log,
          );
  } catch (error) {
    lock?.release();
    throw cannotOpen(where, error);
  }
  const dialect: Dialect = location.kind;
  let clock: DatabaseClock | undefined;
  try {
    const { error } = await new Migrator({ db, provider: migrationProvider(dialect) }).migrateToLatest();
    if (error) throw error;
    if (dialect === 'sqlite') await releaseLeases(db);
    else clock = await databaseClock({ read: () => serverTime(db) });
  } catch (error) {
    await db.destroy().catch(() => undefined);
    lock?.release();
    throw new StoreError(`could not prepare the ${where} named by DATABASE_URL: ${reason(error)}`, {
      cause: error,
    });
  }

  return {
    db,
    dialect,
    now: clock ? clock.now : Date.now,
    statements: count.sent,
    transaction(work, { synchronous = true } = {}) {
      if (dialect === 'postgres')
        return db.transaction().execute(async (trx) => {
          if (!synchronous) await sql`set local synchronous_commit to off`.execute(trx);
          return work(trx);
        });
      return db.connection().execute(async (connection) => {
        // Set for this transaction alone: the one connection's next commit syncs again.
        if (!synchronous) await sql`pragma synchronous = normal`.execute(connection);
        try {
          await sql`begin immediate`.execute(connection);
          try {
            const result = await work(connection);
            await sql`commit`.execute(connection);
            return result;
          } catch (error) {
            await sql`rollback`.execute(connection);
            throw error;
          }
        } finally {
          if (!synchronous) await sql`pragma synchronous = full`.execute(connection);
        }
      });
    },
    async close() {
      clock?.stop();
      try {
        await db.destroy();
      } finally {
        lock?.release();
      }
    },
  };
}

/** The PostgreSQL server's clock, in epoch milliseconds. */
async function serverTime(db: Kysely<Tables>): Promise<number> {
  const { rows } = await sql<{
    ms: number;
  }>`select (extract(epoch from clock_timestamp()) * 1000)::float8 as ms`.execute(db);
  return Number(rows[0]?.ms);
}

function cannotOpen(where: string, error: unknown): StoreError {
  return new StoreError(`could not open the ${where} named by DATABASE_URL: ${reason(error)}`, {
    cause: error,
  });
}

/** An error's own words, without anything that could carry a URL with its password. */
function reason(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && !error.message ? code : error.message;
  }
  return String(error);
}
