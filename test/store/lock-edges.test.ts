import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { openStore, StoreError } from '../../src/store/database.js';
import { holdFile } from '../../src/store/lock.js';

/** The note beside a held SQLite file, and what a start says when the lock file itself is unusable. */

const dir = mkdtempSync(join(tmpdir(), 'bot-lock-edges-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** A fresh database path in its own directory, and its note. */
function fresh() {
  n += 1;
  const path = join(dir, String(n), 'bot.sqlite');
  mkdirSync(join(dir, String(n)));
  return { path, note: `${path}.lock` };
}

// First in the file: the exit hook is added by the first file held in this module's life.
describe('a process that ends while it holds files', () => {
  it('removes every note it still holds on its way out, with one hook for all of them', async () => {
    const one = fresh();
    const two = fresh();
    const before = process.listeners('exit');
    const first = await holdFile(one.path);
    const second = await holdFile(two.path);
    const added = process.listeners('exit').filter((listener) => !before.includes(listener));
    try {
      expect(added).toHaveLength(1);
      expect([existsSync(one.note), existsSync(two.note)]).toEqual([true, true]);
      (added[0] as () => void)(); // as the process exits
      expect([existsSync(one.note), existsSync(two.note)]).toEqual([false, false]);
    } finally {
      first.release();
      second.release();
      for (const listener of added) process.removeListener('exit', listener);
    }
  });
});

describe('the note of the holder', () => {
  it('says when the holder started: when this process did, not now', async () => {
    const { path, note } = fresh();
    const lock = await holdFile(path);
    try {
      const started = Date.parse((JSON.parse(readFileSync(note, 'utf8')) as { started: string }).started);
      const expected = Date.now() - process.uptime() * 1000;
      expect(Math.abs(started - expected)).toBeLessThan(50);
    } finally {
      lock.release();
    }
  });

  it('is told apart from no note at all: a note that cannot be read stops the start, saying why', async () => {
    const { path, note } = fresh();
    const first = await openStore({ kind: 'sqlite', path });
    try {
      unlinkSync(note);
      mkdirSync(note);
      const error = (await openStore({ kind: 'sqlite', path }).catch((e: unknown) => e)) as Error;
      expect(error).toBeInstanceOf(StoreError);
      expect(error.message).toMatch(/^could not open the SQLite file .* named by DATABASE_URL: EISDIR/);
      expect(error.message).not.toContain('in use by');
      rmSync(note, { recursive: true });
    } finally {
      await first.close();
    }
  });
});

describe('a lock file that is not a lock', () => {
  it('is named as the reason the file could not be opened, not as another process holding it', async () => {
    const { path } = fresh();
    writeFileSync(`${path}-lock`, 'not a database, whatever it once was; '.repeat(40));
    const error = (await openStore({ kind: 'sqlite', path }).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(StoreError);
    expect(error.message).toMatch(
      /^could not open the SQLite file .* named by DATABASE_URL: file is not a database$/,
    );
    expect(existsSync(`${path}.lock`)).toBe(false);
  });
});

describe('an in-memory store', () => {
  it.each([':memory:', ''])(
    '%j holds no file and leaves none behind in the working directory',
    async (path) => {
      const here = mkdtempSync(join(dir, 'cwd-'));
      // What a relative path resolves against (path.resolve asks process.cwd()); not chdir, which
      // a worker thread (the mutation runner's) cannot do.
      const cwd = vi.spyOn(process, 'cwd').mockReturnValue(here);
      try {
        const store = await openStore({ kind: 'sqlite', path });
        const other = await openStore({ kind: 'sqlite', path });
        await Promise.all([store.close(), other.close()]);
      } finally {
        cwd.mockRestore();
      }
      expect(readdirSync(here)).toEqual([]);
    },
  );
});
