import { type Kysely, Migrator } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrationProvider } from '../../src/store/migrations.js';
import type { Dialect, Tables } from '../../src/store/schema.js';

/**
 * Migration 016 (src/store/migrations-digest-window.ts) on a store the digests before it used:
 * what they already named, by their rule (the day, or for a weekly digest the week, before each
 * feed's next digest), is marked named, so the first digest after it repeats none of it, and
 * what they did not name yet is left for it.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The daily feed's next digest, and the weekly one's. */
const DAILY_NEXT = Date.parse('2026-11-22T09:00:00Z');
const WEEKLY_NEXT = Date.parse('2026-11-25T09:00:00Z');

const feed = (id: string, channel: string, next: number) => ({
  id,
  team_id: 'T1',
  channel_id: channel,
  subscriber_id: 'U1',
  digest_hour: 9,
  digest_minute: 0,
  digest_zone: 'UTC',
  state: 'active' as const,
  created_at: 0,
  ended_at: null,
  end_reason: null,
  next_digest_at: next,
  lease_owner: null,
  lease_until: null,
  key_notice_at: null,
});

/** Runs on `dialect`'s empty database that `open` connects to (a new one each call). */
export function digestWindowMigrationContract(
  name: string,
  dialect: Dialect,
  open: () => Promise<Kysely<Tables>>,
) {
  let db: Kysely<Tables> | undefined;
  afterEach(async () => {
    await db?.destroy();
  });

  async function storeBefore016(): Promise<Kysely<Tables>> {
    db = await open();
    const { error } = await new Migrator({ db, provider: migrationProvider(dialect) }).migrateTo(
      '015_invoice_states_seen',
    );
    if (error) throw error;
    return db;
  }

  describe(`migration 016 on the digests before it, on ${name}`, () => {
    it('marks named what the last digest named (a day back, a week for a weekly feed), and nothing newer', async () => {
      const db = await storeBefore016();
      await db
        .insertInto('feed_subscriptions')
        .values([feed('daily', 'G1', DAILY_NEXT), feed('weekly', 'G2', WEEKLY_NEXT)])
        .execute();
      await db
        .insertInto('feed_settings')
        .values({
          subscription_id: 'weekly',
          minimums: '{}',
          style: 'full',
          digest: 'weekly',
          weekday: 3,
          version: 1,
          updated_at: 0,
        })
        .execute();
      const held = (subscription_id: string, held_at: number) => ({
        subscription_id,
        currency: 'BTC',
        amount: '0.1',
        held_at,
      });
      await db
        .insertInto('feed_held')
        .values([
          held('daily', DAILY_NEXT - DAY),
          held('daily', DAILY_NEXT - DAY + 1),
          held('weekly', WEEKLY_NEXT - 7 * DAY),
          held('weekly', WEEKLY_NEXT - 2 * DAY),
        ])
        .execute();
      const paid = (channel_id: string, invoice_id: string, paid_at: number) => ({
        channel_id,
        invoice_id,
        title: 'T',
        amount: '1',
        currency: 'USDT',
        link: '',
        how: 'watched' as const,
        paid_at,
      });
      await db
        .insertInto('invoices_paid')
        .values([
          paid('G1', 'old', DAILY_NEXT - DAY),
          paid('G1', 'new', DAILY_NEXT - HOUR),
          paid('C0NOFEED', 'elsewhere', DAILY_NEXT - 3 * DAY),
        ])
        .execute();

      const { error } = await new Migrator({ db, provider: migrationProvider(dialect) }).migrateToLatest();
      expect(error).toBeUndefined();

      const heldRows = await db
        .selectFrom('feed_held')
        .select(['subscription_id', 'held_at', 'digested'])
        .orderBy('id')
        .execute();
      expect(heldRows.map((r) => r.digested)).toEqual([1, 0, 1, 0]);
      const paidRows = await db
        .selectFrom('invoices_paid')
        .select(['invoice_id', 'digested'])
        .orderBy('id')
        .execute();
      expect(paidRows).toEqual([
        { invoice_id: 'old', digested: 1 },
        { invoice_id: 'new', digested: 0 },
        // No feed in that channel: a feed begun there later names only what is paid after it began.
        { invoice_id: 'elsewhere', digested: 0 },
      ]);
      const subs = await db
        .selectFrom('feed_subscriptions')
        .select(['last_digest_reading_id', 'last_digest_change_id', 'last_digest_as_of'])
        .execute();
      // Each feed's first digest after it keeps the rule before it: a day or a week back.
      expect(subs).toEqual([
        { last_digest_reading_id: null, last_digest_change_id: null, last_digest_as_of: null },
        { last_digest_reading_id: null, last_digest_change_id: null, last_digest_as_of: null },
      ]);
    });
  });
}
