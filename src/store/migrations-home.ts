import type { Migration } from 'kysely';
import type { Dialect } from './schema.js';

/**
 * The App Home's migrations (issue 40): the coin each person chose for their Home's week of one
 * coin, one row per installation and person, deleted with the installation (INSTALLATION_TABLES).
 */
export function homeMigrations(_dialect: Dialect): Record<string, Migration> {
  return {
    '012_home_coin_choices': {
      async up(db) {
        await db.schema
          .createTable('home_coin_choices')
          .addColumn('installation_id', 'text', (c) => c.notNull())
          .addColumn('user_id', 'text', (c) => c.notNull())
          .addColumn('coin', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('home_coin_choices_pk', ['installation_id', 'user_id'])
          .execute();
      },
    },
  };
}
