import type { Kysely, Migration } from 'kysely';
import type { Dialect } from './schema.js';

/**
 * Issue 41's tables (invoices as Work Objects): the states a watched invoice was seen in, for its
 * side panel. Numbered 015 and 017; listed in `migrations()` by one spread line.
 */
export function workObjectsMigrations(dialect: Dialect): Record<string, Migration> {
  return {
    '015_invoice_states_seen': {
      async up(db: Kysely<unknown>) {
        // `id` is the order the states were seen in, as the database numbered them: never the
        // time two instances' clocks wrote.
        const table =
          dialect === 'postgres'
            ? db.schema.createTable('invoice_states_seen').addColumn('id', 'bigserial', (c) => c.primaryKey())
            : db.schema
                .createTable('invoice_states_seen')
                .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
        await table
          .addColumn('installation_id', 'text', (c) => c.notNull().defaultTo(''))
          .addColumn('invoice_id', 'text', (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('pay_status', 'text', (c) => c.notNull())
          .addColumn('seen_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('invoice_states_seen_by_invoice')
          .on('invoice_states_seen')
          .columns(['installation_id', 'invoice_id', 'id'])
          .execute();
      },
    },
    '017_invoice_states_seen_by_age': {
      async up(db: Kysely<unknown>) {
        // Each state change forgets the installation's states seen long ago (KEEP_HISTORY_MS):
        // found by their age, not by reading every state the installation keeps.
        await db.schema
          .createIndex('invoice_states_seen_by_age')
          .on('invoice_states_seen')
          .columns(['installation_id', 'seen_at'])
          .execute();
      },
    },
  };
}
