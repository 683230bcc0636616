import { sql } from 'kysely';
import { afterAll, describe, expect, inject, it, vi } from 'vitest';
import { openStore } from '../../src/store/database.js';
import { freshDatabase } from '../support/postgres-server.js';

/**
 * On PostgreSQL every instance keeps leases and due times in the server's time: an instance whose
 * own clock is three minutes ahead agrees with the others on when a lease runs out.
 */

const url = await freshDatabase(inject('postgresUrl'));
const MINUTE = 60_000;

const serverNow = async (store: Awaited<ReturnType<typeof openStore>>) =>
  Number(
    (
      await sql<{ ms: number }>`select (extract(epoch from clock_timestamp()) * 1000)::float8 as ms`.execute(
        store.db,
      )
    ).rows[0]?.ms,
  );

describe('the store’s clock on PostgreSQL', () => {
  const stores: Awaited<ReturnType<typeof openStore>>[] = [];
  afterAll(async () => {
    vi.restoreAllMocks();
    await Promise.all(stores.map((s) => s.close()));
  });

  it('is the server’s, for an instance whose own clock is three minutes ahead', async () => {
    const honest = await openStore({ kind: 'postgres', url });
    const realNow = Date.now.bind(Date);
    const shifted = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + 3 * MINUTE);
    const ahead = await openStore({ kind: 'postgres', url });
    stores.push(honest, ahead);
    const server = await serverNow(ahead);
    expect(Math.abs(ahead.now() - server)).toBeLessThan(1_000);
    expect(Math.abs(ahead.now() - honest.now())).toBeLessThan(1_000);
    expect(Date.now() - ahead.now()).toBeGreaterThan(2 * MINUTE);
    shifted.mockRestore();
  });
});
