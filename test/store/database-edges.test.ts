import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, StoreError } from '../../src/store/database.js';

/** What a start says when the store cannot be opened or prepared: DATABASE_URL, where, and the error's own words. */

const dir = mkdtempSync(join(tmpdir(), 'bot-store-edges-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function refusal(promise: Promise<unknown>): Promise<StoreError> {
  const error = await promise.then(
    () => expect.fail('the store was opened'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StoreError);
  return error as StoreError;
}

describe('a store that cannot be opened or prepared', () => {
  it('quotes the whole of the error’s own message, not only its code', async () => {
    const plain = join(dir, 'plain');
    writeFileSync(plain, 'a file where a folder should be');
    const path = join(plain, 'no', 'bot.sqlite');
    const error = await refusal(openStore({ kind: 'sqlite', path }));
    expect(error.message).toBe(
      `could not open the SQLite file ${path} named by DATABASE_URL: ENOTDIR: not a directory, mkdir '${join(plain, 'no')}'`,
    );
  });

  it('says so when the file was written by a newer version of the bot, keeping the migrator’s error as the cause', async () => {
    const path = join(dir, 'newer', 'bot.sqlite');
    const store = await openStore({ kind: 'sqlite', path });
    await store.db
      .insertInto('kysely_migration' as never)
      .values({ name: '999_from_a_newer_bot', timestamp: new Date(0).toISOString() } as never)
      .execute();
    await store.close();

    const error = await refusal(openStore({ kind: 'sqlite', path }));
    expect(error.message).toMatch(
      /^could not prepare the SQLite file .*newer\/bot\.sqlite named by DATABASE_URL: .*999_from_a_newer_bot/,
    );
    expect(error.cause).toBeInstanceOf(Error);
    expect(error.message).toContain((error.cause as Error).message);
    // Refused, it lets go of the file: the next start gets as far again.
    const again = await refusal(openStore({ kind: 'sqlite', path }));
    expect(again.message).toMatch(/^could not prepare/);
  });

  it('names the PostgreSQL server and port it could not reach, as DATABASE_URL gives them', async () => {
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const { port } = closed.address() as AddressInfo;
    await new Promise((done) => closed.close(done));
    const error = await refusal(
      openStore({ kind: 'postgres', url: `postgres://bot:s3cret-password@127.0.0.1:${port}/x`, poolSize: 2 }),
    );
    expect(error.message).toBe(
      `could not prepare the PostgreSQL at 127.0.0.1:${port}/x named by DATABASE_URL: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });
});
