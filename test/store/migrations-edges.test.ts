import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/database.js';
import { installationId, ONE_WORKSPACE } from '../../src/store/keys.js';

/**
 * The schema a fresh SQLite file ends with once every migration ran: what later migrations drop
 * and recreate by name, what an operator sees in a backup, and the rules the indexes keep.
 */

const dir = mkdtempSync(join(tmpdir(), 'bot-migrations-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
const fresh = () => {
  n += 1;
  return openStore({ kind: 'sqlite', path: join(dir, String(n), 'bot.sqlite') });
};

/** Every table and index of the bot's own, by name, as SQLite keeps its definition. */
const SCHEMA: Record<string, string> = {
  background_pace: `CREATE TABLE "background_pace" ("installation_id" text primary key, "next_slot_at" bigint not null)`,
  balance_history: `CREATE TABLE "balance_history" ("id" integer primary key autoincrement, "taken_at" bigint not null, "balances" text not null, "installation_id" text default '' not null)`,
  balance_history_by_time: `CREATE INDEX "balance_history_by_time" on "balance_history" ("installation_id", "taken_at")`,
  feed_changes: `CREATE TABLE "feed_changes" ("id" integer primary key autoincrement, "at" bigint not null, "currency" text not null, "direction" text not null, "installation_id" text default '' not null)`,
  feed_changes_by_time: `CREATE INDEX "feed_changes_by_time" on "feed_changes" ("installation_id", "at")`,
  feed_held: `CREATE TABLE "feed_held" ("id" integer primary key autoincrement, "installation_id" text default '' not null, "subscription_id" text not null, "currency" text not null, "amount" text not null, "held_at" bigint not null, "posted" integer default 0 not null, "digested" integer default 0 not null)`,
  feed_held_by_subscription: `CREATE INDEX "feed_held_by_subscription" on "feed_held" ("installation_id", "subscription_id", "held_at")`,
  feed_one_per_channel: `CREATE UNIQUE INDEX "feed_one_per_channel" on "feed_subscriptions" ("installation_id", "channel_id") where "state" = 'active'`,
  feed_subscriptions_by_state: `CREATE INDEX "feed_subscriptions_by_state" on "feed_subscriptions" ("state", "ended_at")`,
  feed_settings: `CREATE TABLE "feed_settings" ("subscription_id" text primary key, "installation_id" text default '' not null, "coins" text, "minimums" text not null, "style" text not null, "digest" text not null, "weekday" integer not null, "version" integer not null, "updated_at" bigint not null)`,
  feed_subscriptions: `CREATE TABLE "feed_subscriptions" ("id" text primary key, "team_id" text not null, "channel_id" text not null, "subscriber_id" text not null, "digest_hour" integer not null, "digest_minute" integer not null, "digest_zone" text not null, "state" text not null, "created_at" bigint not null, "ended_at" bigint, "end_reason" text, "next_digest_at" bigint not null, "lease_owner" text, "lease_until" bigint, "key_notice_at" bigint, "installation_id" text default '' not null, "last_digest_reading_id" bigint, "last_digest_change_id" bigint, "last_digest_as_of" bigint)`,
  home_coin_choices: `CREATE TABLE "home_coin_choices" ("installation_id" text not null, "user_id" text not null, "coin" text not null, constraint "home_coin_choices_pk" primary key ("installation_id", "user_id"))`,
  installations: `CREATE TABLE "installations" ("id" text primary key, "team_id" text, "enterprise_id" text, "is_enterprise_install" integer not null, "app_id" text, "bot_token" text, "bot_refresh_token" text, "bot_token_expires_at" bigint, "bot_id" text not null, "bot_user_id" text not null, "bot_scopes" text not null, "installer_user_id" text not null, "payment_api_key" text, "payment_key_connected_by" text, "payment_key_connected_at" bigint, "created_at" bigint not null, "updated_at" bigint not null)`,
  invoices_paid: `CREATE TABLE "invoices_paid" ("id" integer primary key autoincrement, "installation_id" text default '' not null, "channel_id" text not null, "invoice_id" text not null, "title" text not null, "amount" text not null, "currency" text not null, "link" text not null, "how" text not null, "paid_at" bigint not null, "listed" integer default 0 not null, "digested" integer default 0 not null)`,
  invoices_paid_by_channel: `CREATE INDEX "invoices_paid_by_channel" on "invoices_paid" ("installation_id", "channel_id", "paid_at")`,
  invoices_paid_once: `CREATE UNIQUE INDEX "invoices_paid_once" on "invoices_paid" ("installation_id", "channel_id", "invoice_id")`,
  invoices_seen: `CREATE TABLE "invoices_seen" ("installation_id" text default '' not null, "invoice_id" text not null, "paid" integer not null, "seen_at" bigint not null, constraint "invoices_seen_key" primary key ("installation_id", "invoice_id"))`,
  invoices_seen_by_age: `CREATE INDEX "invoices_seen_by_age" on "invoices_seen" ("installation_id", "seen_at")`,
  invoice_states_seen: `CREATE TABLE "invoice_states_seen" ("id" integer primary key autoincrement, "installation_id" text default '' not null, "invoice_id" text not null, "status" text not null, "pay_status" text not null, "seen_at" bigint not null)`,
  invoice_states_seen_by_invoice: `CREATE INDEX "invoice_states_seen_by_invoice" on "invoice_states_seen" ("installation_id", "invoice_id", "id")`,
  invoice_states_seen_by_age: `CREATE INDEX "invoice_states_seen_by_age" on "invoice_states_seen" ("installation_id", "seen_at")`,
  outbox: `CREATE TABLE "outbox" ("id" integer primary key autoincrement, "lane" text not null, "method" text not null, "channel" text not null, "thread_ts" text, "ts" text, "message" text not null, "watch_id" text, "created_at" bigint not null, "next_attempt_at" bigint not null, "attempts" integer default 0 not null, "attempted_at" bigint, "lease_owner" text, "lease_until" bigint, "done_at" bigint, "result" text, "subscription_id" text, "installation_id" text default '' not null)`,
  outbox_pending: `CREATE INDEX "outbox_pending" on "outbox" ("done_at", "lane", "id")`,
  seen_events: `CREATE TABLE "seen_events" ("id" text primary key, "seen_at" bigint not null)`,
  service_state: `CREATE TABLE "service_state" ("key" text primary key, "value" text not null, "updated_at" bigint not null)`,
  singletons: `CREATE TABLE "singletons" ("installation_id" text default '' not null, "name" text not null, "next_run_at" bigint not null, "lease_owner" text, "lease_until" bigint, "last_success_at" bigint, constraint "singletons_key" primary key ("installation_id", "name"))`,
  singletons_due: `CREATE INDEX "singletons_due" on "singletons" ("name", "next_run_at")`,
  watched_invoices: `CREATE TABLE "watched_invoices" ("installation_id" text default '' not null, "invoice_id" text not null, "snapshot" text not null, "watched_since" bigint not null, "next_poll_at" bigint not null, "failures" integer default 0 not null, "failing_since" bigint, "lease_owner" text, "lease_until" bigint, "account_replaced" integer default 0 not null, constraint "watched_invoices_key" primary key ("installation_id", "invoice_id"))`,
  watched_invoices_due: `CREATE INDEX "watched_invoices_due" on "watched_invoices" ("next_poll_at")`,
  watched_invoices_due_by_installation: `CREATE INDEX "watched_invoices_due_by_installation" on "watched_invoices" ("installation_id", "next_poll_at")`,
  watches: `CREATE TABLE "watches" ("id" text primary key, "team_id" text not null, "channel_id" text not null, "invoice_id" text not null, "watcher_id" text not null, "card_ts" text not null, "thread_ts" text not null, "state" text not null, "started_at" bigint not null, "ends_at" bigint not null, "ended_at" bigint, "end_reason" text, "installation_id" text default '' not null)`,
  watches_by_state: `CREATE INDEX "watches_by_state" on "watches" ("state", "ended_at")`,
  watches_by_invoice: `CREATE INDEX "watches_by_invoice" on "watches" ("invoice_id", "state")`,
  watches_one_per_channel: `CREATE UNIQUE INDEX "watches_one_per_channel" on "watches" ("installation_id", "channel_id", "invoice_id") where "state" <> 'ended'`,
};

async function schemaOf(store: Store): Promise<Record<string, string>> {
  const { rows } = await sql<{ name: string; sql: string }>`
    select name, sql from sqlite_master
    where name not like 'sqlite_%' and name not like 'kysely_%' order by name`.execute(store.db);
  return Object.fromEntries(rows.map((r) => [r.name, r.sql]));
}

describe('the schema every migration leaves', () => {
  it('has each table and index by its name, with its columns, defaults, keys and conditions', async () => {
    const store = await fresh();
    expect(await schemaOf(store)).toEqual(SCHEMA);
    await store.close();
  });

  it('is the same when the file is opened again: nothing runs twice', async () => {
    const path = join(dir, 'again', 'bot.sqlite');
    await (await openStore({ kind: 'sqlite', path })).close();
    const store = await openStore({ kind: 'sqlite', path });
    expect(await schemaOf(store)).toEqual(SCHEMA);
    await store.close();
  });
});

describe('the rules the indexes keep', () => {
  const watch = (id: string, state: 'pending' | 'active' | 'ended', installation = ONE_WORKSPACE) => ({
    id,
    team_id: 'T0ONE',
    channel_id: 'C0ONE',
    invoice_id: 'in_1',
    watcher_id: 'U0ONE',
    card_ts: '1.1',
    thread_ts: '1.1',
    state,
    started_at: 1,
    ends_at: 2,
    installation_id: installation,
  });
  const feed = (id: string, state: 'active' | 'ended', installation = ONE_WORKSPACE) => ({
    id,
    team_id: 'T0ONE',
    channel_id: 'C0ONE',
    subscriber_id: 'U0ONE',
    digest_hour: 9,
    digest_minute: 0,
    digest_zone: 'UTC',
    state,
    created_at: 1,
    next_digest_at: 2,
    installation_id: installation,
  });

  it('one watch of an invoice per channel until it ends, pending or active; ended ones may be many', async () => {
    const store = await fresh();
    const add = (row: ReturnType<typeof watch>) => store.db.insertInto('watches').values(row).execute();
    await add(watch('w1', 'ended'));
    await add(watch('w2', 'ended'));
    await add(watch('w3', 'pending'));
    await expect(add(watch('w4', 'active'))).rejects.toThrow(/UNIQUE/);
    await add(watch('w5', 'active', installationId('T0OTHER')));
    expect(
      (await store.db.selectFrom('watches').select('id').orderBy('id').execute()).map((r) => r.id),
    ).toEqual(['w1', 'w2', 'w3', 'w5']);
    await store.close();
  });

  it('one active feed per channel and installation; ended ones may be many', async () => {
    const store = await fresh();
    const add = (row: ReturnType<typeof feed>) =>
      store.db.insertInto('feed_subscriptions').values(row).execute();
    await add(feed('f1', 'ended'));
    await add(feed('f2', 'ended'));
    await add(feed('f3', 'active'));
    await expect(add(feed('f4', 'active'))).rejects.toThrow(/UNIQUE/);
    await add(feed('f5', 'active', installationId('T0OTHER')));
    const ids = await store.db.selectFrom('feed_subscriptions').select('id').orderBy('id').execute();
    expect(ids.map((r) => r.id)).toEqual(['f1', 'f2', 'f3', 'f5']);
    await store.close();
  });
});
