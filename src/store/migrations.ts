import {
  type ColumnDefinitionBuilder,
  type Kysely,
  type Migration,
  type MigrationProvider,
  sql,
} from 'kysely';
import { digestWindowMigrations } from './migrations-digest-window.js';
import { feedSettingsMigrations } from './migrations-feed-settings.js';
import { homeMigrations } from './migrations-home.js';
import { invoicesSeenMigrations } from './migrations-invoices-seen.js';
import { workObjectsMigrations } from './migrations-work-objects.js';
import type { Dialect } from './schema.js';

/**
 * The schema's history, oldest first. A migration never changes once released; a change is a
 * new one. They run at start, inside Kysely's migration lock, so instances starting together
 * apply each one once.
 */
function migrations(dialect: Dialect): Record<string, Migration> {
  const time = 'bigint';
  const serial = (db: Kysely<unknown>, table: string) =>
    dialect === 'postgres'
      ? db.schema.createTable(table).addColumn('id', 'bigserial', (c) => c.primaryKey())
      : db.schema.createTable(table).addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());

  return {
    '001_watches': {
      async up(db) {
        await db.schema
          .createTable('watched_invoices')
          .addColumn('invoice_id', 'text', (c) => c.primaryKey())
          .addColumn('snapshot', 'text', (c) => c.notNull())
          .addColumn('watched_since', time, (c) => c.notNull())
          .addColumn('next_poll_at', time, (c) => c.notNull())
          .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('lease_owner', 'text')
          .addColumn('lease_until', time)
          .execute();
        await db.schema
          .createIndex('watched_invoices_due')
          .on('watched_invoices')
          .column('next_poll_at')
          .execute();

        await db.schema
          .createTable('watches')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('team_id', 'text', (c) => c.notNull())
          .addColumn('channel_id', 'text', (c) => c.notNull())
          .addColumn('invoice_id', 'text', (c) => c.notNull())
          .addColumn('watcher_id', 'text', (c) => c.notNull())
          .addColumn('card_ts', 'text', (c) => c.notNull())
          .addColumn('thread_ts', 'text', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('started_at', time, (c) => c.notNull())
          .addColumn('ends_at', time, (c) => c.notNull())
          .addColumn('ended_at', time)
          .addColumn('end_reason', 'text')
          .execute();
        // Several watches of one invoice in one channel are one watch.
        await db.schema
          .createIndex('watches_one_per_channel')
          .on('watches')
          .columns(['channel_id', 'invoice_id'])
          .unique()
          .where(sql.ref('state'), '=', 'active')
          .execute();
        await db.schema
          .createIndex('watches_by_invoice')
          .on('watches')
          .columns(['invoice_id', 'state'])
          .execute();

        await serial(db, 'outbox')
          .addColumn('lane', 'text', (c) => c.notNull())
          .addColumn('method', 'text', (c) => c.notNull())
          .addColumn('channel', 'text', (c) => c.notNull())
          .addColumn('thread_ts', 'text')
          .addColumn('ts', 'text')
          .addColumn('message', 'text', (c) => c.notNull())
          .addColumn('watch_id', 'text')
          .addColumn('created_at', time, (c) => c.notNull())
          .addColumn('next_attempt_at', time, (c) => c.notNull())
          .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('attempted_at', time)
          .addColumn('lease_owner', 'text')
          .addColumn('lease_until', time)
          .addColumn('done_at', time)
          .addColumn('result', 'text')
          .execute();
        await db.schema
          .createIndex('outbox_pending')
          .on('outbox')
          .columns(['done_at', 'lane', 'id'])
          .execute();

        await db.schema
          .createTable('service_state')
          .addColumn('key', 'text', (c) => c.primaryKey())
          .addColumn('value', 'text', (c) => c.notNull())
          .addColumn('updated_at', time, (c) => c.notNull())
          .execute();

        await db.schema
          .createTable('seen_events')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('seen_at', time, (c) => c.notNull())
          .execute();
      },
    },
    '002_feed': {
      async up(db) {
        await db.schema.alterTable('outbox').addColumn('subscription_id', 'text').execute();

        await db.schema
          .createTable('feed_subscriptions')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('team_id', 'text', (c) => c.notNull())
          .addColumn('channel_id', 'text', (c) => c.notNull())
          .addColumn('subscriber_id', 'text', (c) => c.notNull())
          .addColumn('digest_hour', 'integer', (c) => c.notNull())
          .addColumn('digest_minute', 'integer', (c) => c.notNull())
          .addColumn('digest_zone', 'text', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('created_at', time, (c) => c.notNull())
          .addColumn('ended_at', time)
          .addColumn('end_reason', 'text')
          .addColumn('next_digest_at', time, (c) => c.notNull())
          .addColumn('lease_owner', 'text')
          .addColumn('lease_until', time)
          .addColumn('key_notice_at', time)
          .execute();
        await db.schema
          .createIndex('feed_one_per_channel')
          .on('feed_subscriptions')
          .column('channel_id')
          .unique()
          .where(sql.ref('state'), '=', 'active')
          .execute();

        await serial(db, 'balance_history')
          .addColumn('taken_at', time, (c) => c.notNull())
          .addColumn('balances', 'text', (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('balance_history_by_time')
          .on('balance_history')
          .column('taken_at')
          .execute();

        await serial(db, 'feed_changes')
          .addColumn('at', time, (c) => c.notNull())
          .addColumn('currency', 'text', (c) => c.notNull())
          .addColumn('direction', 'text', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('feed_changes_by_time').on('feed_changes').column('at').execute();

        await db.schema
          .createTable('singletons')
          .addColumn('name', 'text', (c) => c.primaryKey())
          .addColumn('next_run_at', time, (c) => c.notNull())
          .addColumn('lease_owner', 'text')
          .addColumn('lease_until', time)
          .addColumn('last_success_at', time)
          .execute();
      },
    },
    '003_watch_failing_since': {
      async up(db) {
        // A watch whose invoice cannot be read still ends on time, and says since when it could not read it.
        await db.schema.alterTable('watched_invoices').addColumn('failing_since', time).execute();
      },
    },
    '004_installations': {
      async up(db) {
        // Many workspaces: one row per install, by team id (enterprise id for an organisation-wide
        // one). Tokens and keys are sealed values (src/store/sealing.ts), never plain text.
        await db.schema
          .createTable('installations')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('team_id', 'text')
          .addColumn('enterprise_id', 'text')
          .addColumn('is_enterprise_install', 'integer', (c) => c.notNull())
          .addColumn('app_id', 'text')
          .addColumn('bot_token', 'text')
          .addColumn('bot_refresh_token', 'text')
          .addColumn('bot_token_expires_at', time)
          .addColumn('bot_id', 'text', (c) => c.notNull())
          .addColumn('bot_user_id', 'text', (c) => c.notNull())
          .addColumn('bot_scopes', 'text', (c) => c.notNull())
          .addColumn('installer_user_id', 'text', (c) => c.notNull())
          .addColumn('payment_api_key', 'text')
          .addColumn('payment_key_connected_by', 'text')
          .addColumn('payment_key_connected_at', time)
          .addColumn('created_at', time, (c) => c.notNull())
          .addColumn('updated_at', time, (c) => c.notNull())
          .execute();
      },
    },
    '005_installation_scope': {
      async up(db) {
        // Many workspaces: a watch, its invoice's checks and the bot's messages belong to an
        // installation ('' is the one workspace's). The same invoice id watched in two
        // installations is two checks with two keys; a channel shared by two is two channels.
        const scope = (c: ColumnDefinitionBuilder) => c.notNull().defaultTo('');
        await db.schema.alterTable('watches').addColumn('installation_id', 'text', scope).execute();
        await db.schema.dropIndex('watches_one_per_channel').execute();
        await db.schema
          .createIndex('watches_one_per_channel')
          .on('watches')
          .columns(['installation_id', 'channel_id', 'invoice_id'])
          .unique()
          .where(sql.ref('state'), '=', 'active')
          .execute();
        await db.schema.alterTable('outbox').addColumn('installation_id', 'text', scope).execute();

        await db.schema
          .createTable('watched_invoices_scoped')
          .addColumn('installation_id', 'text', scope)
          .addColumn('invoice_id', 'text', (c) => c.notNull())
          .addColumn('snapshot', 'text', (c) => c.notNull())
          .addColumn('watched_since', time, (c) => c.notNull())
          .addColumn('next_poll_at', time, (c) => c.notNull())
          .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('failing_since', time)
          .addColumn('lease_owner', 'text')
          .addColumn('lease_until', time)
          .addPrimaryKeyConstraint('watched_invoices_key', ['installation_id', 'invoice_id'])
          .execute();
        await sql`insert into watched_invoices_scoped
          (invoice_id, snapshot, watched_since, next_poll_at, failures, failing_since, lease_owner, lease_until)
          select invoice_id, snapshot, watched_since, next_poll_at, failures, failing_since, lease_owner, lease_until
          from watched_invoices`.execute(db);
        await db.schema.dropTable('watched_invoices').execute();
        await db.schema.alterTable('watched_invoices_scoped').renameTo('watched_invoices').execute();
        await db.schema
          .createIndex('watched_invoices_due')
          .on('watched_invoices')
          .column('next_poll_at')
          .execute();
      },
    },
    '006_background_budget': {
      async up(db) {
        // PAYMENT_API_BACKGROUND_RPS is each key's, whatever the number of instances: the checks
        // claimed for an installation in the current second, all instances together.
        await db.schema
          .createTable('background_budget')
          .addColumn('installation_id', 'text', (c) => c.primaryKey())
          .addColumn('second', time, (c) => c.notNull())
          .addColumn('used', 'integer', (c) => c.notNull())
          .execute();
      },
    },
    '007_feed_scope': {
      async up(db) {
        // Many workspaces: a feed, the balance readings it compares, the changes it counted and
        // its balance poll belong to an installation ('' is the one workspace's), read with that
        // installation's key and posted with its token. A channel shared by two installations
        // may have a feed from each.
        const scope = (c: ColumnDefinitionBuilder) => c.notNull().defaultTo('');
        for (const table of ['feed_subscriptions', 'balance_history', 'feed_changes'])
          await db.schema.alterTable(table).addColumn('installation_id', 'text', scope).execute();
        await db.schema.dropIndex('feed_one_per_channel').execute();
        await db.schema
          .createIndex('feed_one_per_channel')
          .on('feed_subscriptions')
          .columns(['installation_id', 'channel_id'])
          .unique()
          .where(sql.ref('state'), '=', 'active')
          .execute();
        await db.schema.dropIndex('balance_history_by_time').execute();
        await db.schema
          .createIndex('balance_history_by_time')
          .on('balance_history')
          .columns(['installation_id', 'taken_at'])
          .execute();
        await db.schema.dropIndex('feed_changes_by_time').execute();
        await db.schema
          .createIndex('feed_changes_by_time')
          .on('feed_changes')
          .columns(['installation_id', 'at'])
          .execute();

        // One balance poll per installation: the singleton's key becomes (installation, name).
        await db.schema
          .createTable('singletons_scoped')
          .addColumn('installation_id', 'text', scope)
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('next_run_at', time, (c) => c.notNull())
          .addColumn('lease_owner', 'text')
          .addColumn('lease_until', time)
          .addColumn('last_success_at', time)
          .addPrimaryKeyConstraint('singletons_key', ['installation_id', 'name'])
          .execute();
        await sql`insert into singletons_scoped (name, next_run_at, lease_owner, lease_until, last_success_at)
          select name, next_run_at, lease_owner, lease_until, last_success_at from singletons`.execute(db);
        await db.schema.dropTable('singletons').execute();
        await db.schema.alterTable('singletons_scoped').renameTo('singletons').execute();
        await db.schema
          .createIndex('singletons_due')
          .on('singletons')
          .columns(['name', 'next_run_at'])
          .execute();
      },
    },
    '008_background_pace': {
      async up(db) {
        // PAYMENT_API_BACKGROUND_RPS is kept when each call is made, not when checks are claimed:
        // each installation's (each key's) next free slot, all instances together.
        await db.schema.dropTable('background_budget').execute();
        await db.schema
          .createTable('background_pace')
          .addColumn('installation_id', 'text', (c) => c.primaryKey())
          .addColumn('next_slot_at', time, (c) => c.notNull())
          .execute();
        // Claims take an installation's checks oldest first.
        await db.schema
          .createIndex('watched_invoices_due_by_installation')
          .on('watched_invoices')
          .columns(['installation_id', 'next_poll_at'])
          .execute();
      },
    },
    '009_watch_pending': {
      async up(db) {
        // A watch is stored as 'pending' before its card is posted, and holds its channel's one
        // watch of the invoice from then on: a second start is told so before it posts anything.
        await db.schema.dropIndex('watches_one_per_channel').execute();
        await db.schema
          .createIndex('watches_one_per_channel')
          .on('watches')
          .columns(['installation_id', 'channel_id', 'invoice_id'])
          .unique()
          .where(sql.ref('state'), '<>', 'ended')
          .execute();
      },
    },
    '010_watch_account_replaced': {
      async up(db) {
        // A watch whose invoice the replaced key's account does not know ends for that reason.
        await db.schema
          .alterTable('watched_invoices')
          .addColumn('account_replaced', 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
      },
    },
    '011_ended_rows': {
      async up(db) {
        // Counting or listing what is active reads no ended row, and what ended long ago is
        // found for deletion (ENDED_RETENTION_DAYS) without reading the rest.
        for (const table of ['watches', 'feed_subscriptions'] as const)
          await db.schema.createIndex(`${table}_by_state`).on(table).columns(['state', 'ended_at']).execute();
      },
    },
    ...homeMigrations(dialect),
    ...invoicesSeenMigrations(dialect),
    ...workObjectsMigrations(dialect),
    ...feedSettingsMigrations(dialect),
    ...digestWindowMigrations(),
  };
}

export function migrationProvider(dialect: Dialect): MigrationProvider {
  return { getMigrations: async () => migrations(dialect) };
}
