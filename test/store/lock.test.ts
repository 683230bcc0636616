import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store, StoreError } from '../../src/store/database.js';

/** SQLite is for one process: SQLite's own lock, the note beside the file, and what a start does with leases. */

const dir = mkdtempSync(join(tmpdir(), 'bot-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const opened: Store[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

let n = 0;
/** A fresh database path in its own directory, and its lock file. */
function fresh() {
  n += 1;
  const path = join(dir, String(n), 'bot.sqlite');
  mkdirSync(join(dir, String(n)));
  return { path, lock: `${path}.lock` };
}
async function open(path: string): Promise<Store> {
  const store = await openStore({ kind: 'sqlite', path });
  opened.push(store);
  return store;
}
const holder = (lock: string) => JSON.parse(readFileSync(lock, 'utf8')) as Record<string, unknown>;
/** Linux has no pid above 2^22, other systems fewer still: this one is never alive. */
const NEVER_A_PID = 2 ** 30;

/** Holds the SQLite file at `path` in another process, as a bot does, until killed; resolves once it holds it. */
async function heldElsewhere(path: string) {
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import Database from 'libsql';
       const db = new Database(${JSON.stringify(`${path}-lock`)});
       db.exec('PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; COMMIT;');
       console.log('held');
       setInterval(() => {}, 1000);`,
    ],
    { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((held, failed) => {
    child.stdout?.once('data', () => held());
    child.once('exit', (code) => failed(new Error(`the holder exited with ${code}`)));
  });
  return {
    /** kill -9: the kernel lets go of the lock with the process. */
    async kill() {
      child.kill('SIGKILL');
      await once(child, 'exit');
    },
  };
}

describe('SQLite is for one process', () => {
  it('refuses a second store on the same file, naming the file, the holder and PostgreSQL; the first keeps working', async () => {
    const { path, lock } = fresh();
    const first = await open(path);
    const error = await openStore({ kind: 'sqlite', path }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toBe(
      `the SQLite file ${path} named by DATABASE_URL is in use by process ${process.pid} on ${hostname()} (started ${holder(lock).started}; see ${lock}). SQLite is for one process; to run several, use PostgreSQL (DATABASE_URL=postgres://…).`,
    );
    expect(await first.db.selectFrom('watches').selectAll().execute()).toEqual([]);
    expect(holder(lock)).toMatchObject({ pid: process.pid, host: hostname() });
  });

  it('refuses at once while another process holds the file, without waiting or migrating, and starts once it is gone', async () => {
    const { path, lock } = fresh();
    await (await openStore({ kind: 'sqlite', path })).close();
    const other = await heldElsewhere(path);
    const before = statSync(path);
    const started = performance.now();
    const error = await openStore({ kind: 'sqlite', path }).catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(1000);
    // The other process wrote no note: it is named as it can be.
    expect((error as Error).message).toBe(
      `the SQLite file ${path} named by DATABASE_URL is in use by another process. SQLite is for one process; to run several, use PostgreSQL (DATABASE_URL=postgres://…).`,
    );
    expect(statSync(path).mtimeMs).toBe(before.mtimeMs);
    expect(existsSync(lock)).toBe(false);
    await other.kill();
    await open(path);
    expect(holder(lock)).toMatchObject({ pid: process.pid });
  });

  it('writes over a note left by a holder that is gone, whoever and wherever it was', async () => {
    for (const left of [
      JSON.stringify({ pid: NEVER_A_PID, host: 'another-container', started: '2026-01-01T00:00:00Z' }),
      '',
      '{"pid": 12',
    ]) {
      const { path, lock } = fresh();
      writeFileSync(lock, left);
      await open(path);
      expect(holder(lock)).toMatchObject({ pid: process.pid, host: hostname() });
    }
  });

  it('removes its note on close, so the file can be opened again', async () => {
    const { path, lock } = fresh();
    const store = await openStore({ kind: 'sqlite', path });
    expect(existsSync(lock)).toBe(true);
    await store.close();
    expect(existsSync(lock)).toBe(false);
    await open(path);
    expect(holder(lock)).toMatchObject({ pid: process.pid });
  });

  it('writes no note when the file cannot be opened', async () => {
    const { path, lock } = fresh();
    mkdirSync(path); // a directory where the database should be
    await expect(openStore({ kind: 'sqlite', path })).rejects.toThrow(/^could not open the SQLite file/);
    expect(existsSync(lock)).toBe(false);
  });

  it('leaves a note alone on close once it is no longer its own', async () => {
    const { path, lock } = fresh();
    const store = await openStore({ kind: 'sqlite', path });
    const other = JSON.stringify({ pid: NEVER_A_PID, host: 'other-host', started: '2026-01-01T00:00:00Z' });
    writeFileSync(lock, other);
    await store.close();
    expect(readFileSync(lock, 'utf8')).toBe(other);
  });
});

describe('the refusal names the holder its note names, and no one its note does not', () => {
  const NOTE = { pid: 4242, host: 'bot-7f9c', started: '2026-11-24T10:00:00.000Z' };
  it.each<[string, unknown, string]>([
    ['a whole note', NOTE, 'process 4242 on bot-7f9c (started 2026-11-24T10:00:00.000Z; see NOTE)'],
    ['no start time', { pid: 4242, host: 'bot-7f9c' }, 'another process'],
    ['no host', { pid: 4242, started: NOTE.started }, 'another process'],
    ['a pid that is not a whole number', { ...NOTE, pid: '4242' }, 'another process'],
    ['not JSON', 'garbage', 'another process'],
  ])('%s', async (_label, note, who) => {
    const { path, lock } = fresh();
    const other = await heldElsewhere(path);
    try {
      writeFileSync(lock, typeof note === 'string' ? note : JSON.stringify(note));
      const error = (await openStore({ kind: 'sqlite', path }).catch((e: unknown) => e)) as Error;
      expect(error.message).toContain(`is in use by ${who.replace('NOTE', lock)}. SQLite is for one process`);
      expect(error.cause).toMatchObject({ name: 'LockHeldError', cause: { code: 'SQLITE_BUSY' } });
      expect((error.cause as Error).message).toBe(`${lock}: the file is held by another process`);
      // Refused, it leaves the holder's note as it was.
      expect(readFileSync(lock, 'utf8')).toBe(typeof note === 'string' ? note : JSON.stringify(note));
    } finally {
      await other.kill();
    }
  });
});

describe('opening a SQLite store after a crash', () => {
  it('releases every lease left in the file, in every table that has them: their holder is gone', async () => {
    const { path } = fresh();
    const before = await openStore({ kind: 'sqlite', path });
    const leased = await tablesWithLeases(before);
    expect(leased).toEqual(
      expect.arrayContaining(['watched_invoices', 'outbox', 'feed_subscriptions', 'singletons']),
    );
    for (const table of leased) await insertLeased(before, table);
    await before.close();

    const after = await open(path);
    for (const table of leased) {
      const stillLeased = sql<{ n: number }>`
        select count(*) as n from ${sql.table(table)} where lease_owner is not null or lease_until is not null`;
      const { rows } = await stillLeased.execute(after.db);
      expect({ table, leased: rows[0]?.n }).toEqual({ table, leased: 0 });
    }
  });
});

async function tablesWithLeases(store: Store): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select m.name from sqlite_master m join pragma_table_info(m.name) c
    where m.type = 'table' and c.name = 'lease_owner' order by m.name`.execute(store.db);
  return rows.map((r) => r.name);
}

/** A row in `table` with every required column filled and a lease running for an hour. */
async function insertLeased(store: Store, table: string): Promise<void> {
  const { rows } = await sql<{
    name: string;
    type: string;
    notnull: number;
    dflt_value: unknown;
    pk: number;
  }>`
    select name, type, "notnull", dflt_value, pk from pragma_table_info(${table})`.execute(store.db);
  const values: Record<string, unknown> = {
    lease_owner: 'dead-instance',
    lease_until: Date.now() + 3_600_000,
  };
  for (const c of rows) {
    const autoincrement = c.pk === 1 && c.type.toLowerCase() === 'integer';
    if (c.name in values || autoincrement || (!c.notnull && !c.pk) || c.dflt_value !== null) continue;
    values[c.name] = c.type.toLowerCase() === 'text' ? `x-${c.name}` : 1;
  }
  const columns = Object.keys(values);
  await sql`insert into ${sql.table(table)} (${sql.join(columns.map((c) => sql.ref(c)))}) values (${sql.join(
    columns.map((c) => values[c]),
  )})`.execute(store.db);
}
