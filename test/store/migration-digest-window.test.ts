import { Kysely, SqliteDialect } from 'kysely';
import Database from 'libsql';
import type { Tables } from '../../src/store/schema.js';
import { digestWindowMigrationContract } from '../support/digest-window-migration-contract.js';

digestWindowMigrationContract(
  'SQLite',
  'sqlite',
  async () => new Kysely<Tables>({ dialect: new SqliteDialect({ database: new Database(':memory:') }) }),
);
