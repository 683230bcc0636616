import type { Migration } from 'kysely';
import type { Dialect } from './schema.js';

/**
 * Issue 40, point 5: the invoices an installation watched or looked up, so that the feed's posts
 * and digests can name those that were paid. Merged into `migrations()` (src/store/migrations.ts).
 */
export function invoicesSeenMigrations(dialect: Dialect): Record<string, Migration> {
  const time = 'bigint';
  return {
    '014_invoices_seen': {
      async up(db) {
        // Whether the installation's last sighting of an invoice (a watch check, a lookup) saw it
        // paid: a lookup that sees it paid after one that did not, or after none, is news.
        await db.schema
          .createTable('invoices_seen')
          .addColumn('installation_id', 'text', (c) => c.notNull().defaultTo(''))
          .addColumn('invoice_id', 'text', (c) => c.notNull())
          .addColumn('paid', 'integer', (c) => c.notNull())
          .addColumn('seen_at', time, (c) => c.notNull())
          .addPrimaryKeyConstraint('invoices_seen_key', ['installation_id', 'invoice_id'])
          .execute();
        await db.schema
          .createIndex('invoices_seen_by_age')
          .on('invoices_seen')
          .columns(['installation_id', 'seen_at'])
          .execute();

        // Each invoice the bot saw turn paid (or first saw paid) in a conversation: once per
        // installation, conversation and invoice. `id` is the database's numbering: the order in
        // which they are listed.
        const table =
          dialect === 'postgres'
            ? db.schema.createTable('invoices_paid').addColumn('id', 'bigserial', (c) => c.primaryKey())
            : db.schema
                .createTable('invoices_paid')
                .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
        await table
          .addColumn('installation_id', 'text', (c) => c.notNull().defaultTo(''))
          .addColumn('channel_id', 'text', (c) => c.notNull())
          .addColumn('invoice_id', 'text', (c) => c.notNull())
          .addColumn('title', 'text', (c) => c.notNull())
          .addColumn('amount', 'text', (c) => c.notNull())
          .addColumn('currency', 'text', (c) => c.notNull())
          .addColumn('link', 'text', (c) => c.notNull())
          .addColumn('how', 'text', (c) => c.notNull())
          .addColumn('paid_at', time, (c) => c.notNull())
          .addColumn('listed', 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
        await db.schema
          .createIndex('invoices_paid_once')
          .on('invoices_paid')
          .columns(['installation_id', 'channel_id', 'invoice_id'])
          .unique()
          .execute();
        await db.schema
          .createIndex('invoices_paid_by_channel')
          .on('invoices_paid')
          .columns(['installation_id', 'channel_id', 'paid_at'])
          .execute();
      },
    },
  };
}
