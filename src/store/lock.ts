import { randomUUID } from 'node:crypto';
import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A lock file beside the SQLite file, naming the one process that uses it: a second process
 * stops at start, before it touches the database; a process that starts after its holder died
 * (kill -9, a crash, a power cut) takes it over at once.
 *
 * The holder is its pid and host and, on Linux, the boot and the process's start time (so a
 * pid given to another process since, pid 1 in a restarted container say, is not taken for the
 * holder); elsewhere a live pid counts as the holder. A holder on another host cannot be
 * checked and counts as alive.
 */

export interface LockHolder {
  pid: number;
  host: string;
  /** When the holder started, for people reading the file or the message. */
  started: string;
  /** Linux: the kernel's boot id. */
  boot?: string;
  /** Linux: the holder's start time, in clock ticks since boot. */
  ticks?: string;
}

export interface FileLock {
  /** Removes the lock file if it is still this process's; safe to call twice. */
  release(): void;
}

/** The file is locked by a process that is alive, or on another host, where this one cannot tell. */
export class LockHeldError extends Error {
  override readonly name = 'LockHeldError';
  readonly elsewhere: boolean;
  constructor(
    readonly path: string,
    readonly holder: LockHolder,
  ) {
    super(`${path} is held by process ${holder.pid} on ${holder.host}`);
    this.elsewhere = holder.host !== hostname();
  }
}

/** A lock file that still cannot be read this long after it was found is left by a crash. */
const WRITE_GRACE_MS = 100;
const ATTEMPTS = 5;

/** Locks held by this process, removed on its way out if nothing released them before. */
const held = new Set<FileLock>();
let exitHook = false;

export async function acquireLock(path: string): Promise<FileLock> {
  const text = `${JSON.stringify(self())}\n`;
  let unreadable: string | undefined;
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    try {
      writeFileSync(path, text, { flag: 'wx' });
      return hold(path, text);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const found = read(path);
    if (found === undefined) continue; // released meanwhile
    const holder = parse(found);
    if (holder && !gone(holder)) throw new LockHeldError(path, holder);
    if (!holder && found !== unreadable) {
      // Being written right now, or left half-written: look again shortly.
      unreadable = found;
      await sleep(WRITE_GRACE_MS);
      continue;
    }
    takeOver(path, found);
  }
  throw new Error(`${path} kept changing while this process tried to take it`);
}

function hold(path: string, text: string): FileLock {
  const lock: FileLock = {
    release() {
      if (!held.delete(lock)) return;
      if (read(path) === text) unlinkSync(path);
    },
  };
  held.add(lock);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const l of held) {
        try {
          l.release();
        } catch {
          // Best effort: the next start takes over a lock whose holder is gone.
        }
      }
    });
  }
  return lock;
}

/**
 * Removes a dead holder's lock file, and only that one: it is moved aside and looked at, and if
 * another process took the lock over in the meantime its file is put back.
 */
function takeOver(path: string, judged: string): void {
  const aside = `${path}.${process.pid}-${randomUUID().slice(0, 8)}`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = read(aside);
  try {
    if (moved !== undefined && moved !== judged) writeFileSync(path, moved, { flag: 'wx' });
  } catch (error) {
    // A third process has made a lock of its own since: the next look finds it.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(aside);
  }
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function parse(text: string): LockHolder | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockHolder>;
    if (Number.isInteger(value.pid) && (value.pid ?? 0) > 0 && typeof value.host === 'string')
      return value as LockHolder;
  } catch {
    // not JSON: undefined below
  }
  return undefined;
}

function self(): LockHolder {
  return {
    pid: process.pid,
    host: hostname(),
    started: new Date(Date.now() - process.uptime() * 1000).toISOString(),
    boot: proc('/proc/sys/kernel/random/boot_id'),
    ticks: startTicks(process.pid),
  };
}

/** Whether the holder has certainly exited; one that cannot be checked counts as alive. */
function gone(holder: LockHolder): boolean {
  if (holder.host !== hostname()) return false;
  const boot = proc('/proc/sys/kernel/random/boot_id');
  if (holder.boot && boot && holder.boot !== boot) return true; // the machine restarted since
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: alive, another user's.
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  // The pid is alive: the holder's, or given to another process since (which started later).
  const ticks = startTicks(holder.pid);
  return holder.ticks !== undefined && ticks !== undefined && ticks !== holder.ticks;
}

/** Linux's /proc: field 22 of the process's stat, counted after the name (in parentheses, may hold spaces). */
function startTicks(pid: number): string | undefined {
  const stat = proc(`/proc/${pid}/stat`);
  return stat?.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

function proc(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}
