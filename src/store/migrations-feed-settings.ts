import type { Kysely, Migration } from 'kysely';
import type { Dialect } from './schema.js';

/**
 * Issue 40, point 4: what each feed's channel tuned (its coins, minimums, posts and digest) and
 * the movements it held below a minimum until they are folded into a post.
 */
export function feedSettingsMigrations(dialect: Dialect): Record<string, Migration> {
  const time = 'bigint';
  const serial = (db: Kysely<unknown>, table: string) =>
    dialect === 'postgres'
      ? db.schema.createTable(table).addColumn('id', 'bigserial', (c) => c.primaryKey())
      : db.schema.createTable(table).addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());

  return {
    '013_feed_settings': {
      async up(db) {
        // One row a subscription once someone saved its settings; none means the defaults.
        await db.schema
          .createTable('feed_settings')
          .addColumn('subscription_id', 'text', (c) => c.primaryKey())
          .addColumn('installation_id', 'text', (c) => c.notNull().defaultTo(''))
          .addColumn('coins', 'text')
          .addColumn('minimums', 'text', (c) => c.notNull())
          .addColumn('style', 'text', (c) => c.notNull())
          .addColumn('digest', 'text', (c) => c.notNull())
          .addColumn('weekday', 'integer', (c) => c.notNull())
          // Raised by every save: a save is written only over the version it read.
          .addColumn('version', 'integer', (c) => c.notNull())
          .addColumn('updated_at', time, (c) => c.notNull())
          .execute();
        await serial(db, 'feed_held')
          .addColumn('installation_id', 'text', (c) => c.notNull().defaultTo(''))
          .addColumn('subscription_id', 'text', (c) => c.notNull())
          .addColumn('currency', 'text', (c) => c.notNull())
          .addColumn('amount', 'text', (c) => c.notNull())
          .addColumn('held_at', time, (c) => c.notNull())
          .addColumn('posted', 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
        await db.schema
          .createIndex('feed_held_by_subscription')
          .on('feed_held')
          .columns(['installation_id', 'subscription_id', 'held_at'])
          .execute();
      },
    },
  };
}
