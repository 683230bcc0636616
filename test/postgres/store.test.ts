import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { openStore, StoreError } from '../../src/store/database.js';
import { migrationProvider } from '../../src/store/migrations.js';
import { checkBatchContract } from '../support/check-batch-contract.js';
import { freshDatabase } from '../support/postgres-server.js';
import { storeContract } from '../support/store-contract.js';

const server = inject('postgresUrl');
const url = await freshDatabase(server);

storeContract('PostgreSQL', () => openStore({ kind: 'postgres', url }));
checkBatchContract('PostgreSQL', () => openStore({ kind: 'postgres', url }));

describe('opening a PostgreSQL store', () => {
  it('migrates once when several instances start at the same moment', async () => {
    const fresh = await freshDatabase(server);
    const stores = await Promise.all(
      Array.from({ length: 5 }, () => openStore({ kind: 'postgres', url: fresh })),
    );
    const [first] = stores;
    const rows = await first?.db
      .selectFrom('kysely_migration' as never)
      .selectAll()
      .execute();
    expect(rows).toHaveLength(Object.keys(await migrationProvider('postgres').getMigrations()).length);
    await Promise.all(stores.map((s) => s.close()));
  });

  it('names DATABASE_URL and the server, never the password, when it cannot connect', async () => {
    const error = await openStore({
      kind: 'postgres',
      url: 'postgres://bot:the-secret-password@127.0.0.1:1/payments',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    const message = String((error as Error).message);
    expect(message).toMatch(
      /^could not prepare the PostgreSQL at 127\.0\.0\.1:1\/payments named by DATABASE_URL: /,
    );
    expect(message).not.toContain('the-secret-password');
  });

  it('stays up when the server drops its connections, tells it once, and serves the next call', async () => {
    const fresh = await freshDatabase(server);
    const lost: Error[] = [];
    const store = await openStore(
      { kind: 'postgres', url: fresh },
      { onLostConnection: (e) => lost.push(e) },
    );
    // Several idle connections in the pool, as a busy instance holds them.
    await Promise.all(Array.from({ length: 4 }, () => store.db.selectFrom('outbox').select('id').execute()));
    const admin = new pg.Client({ connectionString: fresh });
    await admin.connect();
    try {
      const { rowCount } = await admin.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
      );
      expect(rowCount).toBeGreaterThan(1);
    } finally {
      await admin.end();
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(lost).toHaveLength(1);
    expect(await store.db.selectFrom('outbox').select('id').execute()).toEqual([]);
    await store.close();
  });
});
