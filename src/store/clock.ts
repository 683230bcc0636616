/**
 * The one clock every instance keeps its leases, due times and pacing in, on PostgreSQL: the
 * database server's. Two instances whose own clocks disagree by minutes (one not synchronised,
 * one just restored from a snapshot) still agree on when a lease runs out and when a check or a
 * poll falls due, because neither writes or compares its own wall clock: each reads the server's
 * time, and between two readings advances it by its own monotonic clock, which measures elapsed
 * time and is never stepped. A reading is taken when the store opens and every SYNC_EVERY_MS;
 * a reading that fails (the database unreachable) keeps the last one going.
 *
 * On SQLite the one process that holds the file is the only clock there is: its own.
 */

/** How often the server's time is read again: drift between two readings is microseconds. */
export const SYNC_EVERY_MS = 30_000;

export interface DatabaseClock {
  /** The server's time now, in epoch milliseconds. */
  now(): number;
  /** Reads the server's time again; a failure keeps the last reading. */
  sync(): Promise<void>;
  /** Ends the periodic readings. */
  stop(): void;
}

interface ClockParts {
  /** The server's time, in epoch milliseconds, as one statement reads it. */
  read: () => Promise<number>;
  /** Elapsed milliseconds, never stepped (`performance.now`). */
  monotonic?: () => number;
  everyMs?: number;
}

/** A clock that follows the database server's, read once before it resolves, then every `everyMs`. */
export async function databaseClock(parts: ClockParts): Promise<DatabaseClock> {
  const { read, monotonic = () => performance.now(), everyMs = SYNC_EVERY_MS } = parts;
  let serverAt = 0;
  let localAt = 0;
  async function sync(): Promise<void> {
    const sent = monotonic();
    const server = await read();
    const received = monotonic();
    // The server read its clock somewhere in the round trip: its middle, on average.
    serverAt = server + (received - sent) / 2;
    localAt = received;
  }
  await sync();
  const timer = setInterval(() => void sync().catch(() => undefined), everyMs);
  timer.unref();
  return {
    now: () => Math.round(serverAt + (monotonic() - localAt)),
    sync,
    stop: () => clearInterval(timer),
  };
}
