import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';

/**
 * SQLite is for one process. The lock is SQLite's own: `<file>-lock`, a small database of its
 * own held with `locking_mode = EXCLUSIVE` from before the bot reads or migrates anything until
 * it stops. The kernel drops that lock the moment its process ends, however it ends (kill -9, a
 * crash, a container replaced on a shared volume, a reboot), so the next start takes over at
 * once, and a second process is refused at once. (It is not the bot's own database file that is
 * held so: a connection closed with statements still cached would keep holding it.)
 *
 * Beside it, `<file>.lock` is a note naming the holder (pid, host, start time), so that a refusal
 * can say who holds the file. It is a note, not the lock: one left behind by a process that is
 * gone is simply written over by the next holder.
 *
 * An in-memory database (`:memory:`, or `''`: SQLite's private temporary one) is this process's
 * alone: nothing to hold, and no file is made for it.
 */

/** The file is held by another process: `holder` is what its note says, when there is one. */
export class LockHeldError extends Error {
  override readonly name = 'LockHeldError';
  constructor(
    readonly notePath: string,
    readonly holder: LockHolder | undefined,
    options?: ErrorOptions,
  ) {
    super(`${notePath}: the file is held by another process`, options);
  }
}

export interface FileLock {
  /** Lets go of the file (and removes the note if it is still this process's); safe to call twice. */
  release(): void;
}

/** Holds the SQLite file at `path` for this process, or throws `LockHeldError` at once. */
export async function holdFile(path: string): Promise<FileLock> {
  if (path === ':memory:' || path === '') return { release: () => undefined };
  const file = resolve(path);
  const notePath = `${file}.lock`;
  const { default: Database } = await import('libsql');
  const lock = new Database(`${file}-lock`);
  try {
    // Without waiting: another holder is not about to let go.
    lock.exec('PRAGMA locking_mode = EXCLUSIVE; PRAGMA busy_timeout = 0; BEGIN EXCLUSIVE; COMMIT;');
  } catch (error) {
    lock.close();
    if ((error as { code?: unknown }).code === 'SQLITE_BUSY')
      throw new LockHeldError(notePath, readHolder(notePath), { cause: error });
    throw error;
  }
  const note = noteHolder(notePath);
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      note.release();
      lock.close();
    },
  };
}

interface LockHolder {
  pid: number;
  host: string;
  /** When the holder started. */
  started: string;
}

/** The note of a holder this process wrote; removed on close, and on exit if nothing closed it. */
interface HolderNote {
  /** Removes the note if it is still this process's; safe to call twice. */
  release(): void;
}

/** Notes this process holds, removed on its way out if nothing released them before. */
const held = new Set<HolderNote>();
let exitHook = false;

/** Writes this process's note at `path` (over any note a gone holder left there). */
function noteHolder(path: string): HolderNote {
  const text = `${JSON.stringify(self())}\n`;
  writeFileSync(path, text);
  const note: HolderNote = {
    release() {
      if (!held.delete(note)) return;
      if (read(path) === text) unlinkSync(path);
    },
  };
  held.add(note);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const n of held) {
        try {
          n.release();
        } catch {
          // Best effort: the next holder writes over it.
        }
      }
    });
  }
  return note;
}

/** Who the note at `path` names, if it names anyone. */
function readHolder(path: string): LockHolder | undefined {
  const text = read(path);
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as Partial<LockHolder>;
    if (Number.isInteger(value.pid) && typeof value.host === 'string' && typeof value.started === 'string')
      return value as LockHolder;
  } catch {
    // not JSON: nobody named
  }
  return undefined;
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function self(): LockHolder {
  return {
    pid: process.pid,
    host: hostname(),
    started: new Date(Date.now() - process.uptime() * 1000).toISOString(),
  };
}
