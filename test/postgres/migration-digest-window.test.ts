import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { inject } from 'vitest';
import type { Tables } from '../../src/store/schema.js';
import { digestWindowMigrationContract } from '../support/digest-window-migration-contract.js';
import { freshDatabase } from '../support/postgres-server.js';

const server = inject('postgresUrl');

digestWindowMigrationContract(
  'PostgreSQL',
  'postgres',
  async () =>
    new Kysely<Tables>({
      dialect: new PostgresDialect({
        pool: new pg.Pool({ connectionString: await freshDatabase(server), max: 1 }),
      }),
    }),
);
