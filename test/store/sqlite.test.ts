import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { describeLocation, openStore, StoreError } from '../../src/store/database.js';
import { checkBatchContract } from '../support/check-batch-contract.js';
import { storeContract } from '../support/store-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'bot-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

storeContract('SQLite', () => openStore({ kind: 'sqlite', path: join(dir, 'contract', 'bot.sqlite') }));
checkBatchContract('SQLite', () => openStore({ kind: 'sqlite', path: join(dir, 'batch', 'bot.sqlite') }));

describe('opening a SQLite store', () => {
  it('creates the directory of its file', async () => {
    const store = await openStore({ kind: 'sqlite', path: join(dir, 'a', 'b', 'bot.sqlite') });
    await store.close();
  });

  it('writes ahead, commits durably, waits out another writer, and closes for good', async () => {
    const store = await openStore({ kind: 'sqlite', path: join(dir, 'pragmas', 'bot.sqlite') });
    const pragma = async (name: string) =>
      Object.values((await sql.raw(`PRAGMA ${name}`).execute(store.db)).rows[0] as object)[0];
    expect(await pragma('journal_mode')).toBe('wal');
    expect(await pragma('synchronous')).toBe(2); // FULL
    expect(await pragma('busy_timeout')).toBe(5000);
    await store.close();
    await expect(store.db.selectFrom('watches').selectAll().execute()).rejects.toThrow();
  });

  it('names DATABASE_URL and the file when it cannot be opened', async () => {
    // A directory under a file cannot be made (not /proc: Node 20's recursive mkdir loops there).
    const error = await openStore({ kind: 'sqlite', path: '/etc/hostname/no/bot.sqlite' }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StoreError);
    expect(String((error as Error).message)).toMatch(
      /^could not open the SQLite file \/etc\/hostname\/no\/bot\.sqlite named by DATABASE_URL: ENOTDIR/,
    );
    expect((error as Error).cause).toMatchObject({ code: 'ENOTDIR' });
  });

  it('names DATABASE_URL and the server, never the password, when PostgreSQL cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const { port } = closed.address() as AddressInfo;
    await new Promise((done) => closed.close(done));
    const error = await openStore({
      kind: 'postgres',
      url: `postgres://bot:s3cret-password@127.0.0.1:${port}/x`,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).name).toBe('StoreError');
    expect((error as Error).message).toMatch(
      new RegExp(
        `^could not prepare the PostgreSQL at 127\\.0\\.0\\.1:${port}/x named by DATABASE_URL: .*ECONNREFUSED`,
      ),
    );
    expect((error as Error).message).not.toContain('s3cret-password');
  });

  it('describes a location without credentials', () => {
    expect(
      describeLocation({ kind: 'postgres', url: 'postgres://bot:s3cret-password@db.internal:6543/payments' }),
    ).toBe('PostgreSQL at db.internal:6543/payments');
    expect(describeLocation({ kind: 'postgres', url: 'postgresql://db/x' })).toBe('PostgreSQL at db:5432/x');
  });
});
