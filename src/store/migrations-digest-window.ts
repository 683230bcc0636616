import { type Migration, sql } from 'kysely';

/**
 * Issue 40, "a digest finance can reconcile": consecutive digests tile time. What the last digest
 * sent reached is kept on its subscription (the balance reading it showed and the last feed
 * change it counted, both numbered by the database), and each held movement and paid invoice is
 * marked by the digest that named it. Numbered 016; listed in `migrations()` by one spread line.
 */
export function digestWindowMigrations(): Record<string, Migration> {
  return {
    '016_digest_window': {
      async up(db) {
        await db.schema
          .alterTable('feed_subscriptions')
          .addColumn('last_digest_reading_id', 'bigint')
          .execute();
        await db.schema
          .alterTable('feed_subscriptions')
          .addColumn('last_digest_change_id', 'bigint')
          .execute();
        // Shown only ("changes since …"), never used to choose what a digest names.
        await db.schema.alterTable('feed_subscriptions').addColumn('last_digest_as_of', 'bigint').execute();
        for (const table of ['feed_held', 'invoices_paid'] as const)
          await db.schema
            .alterTable(table)
            .addColumn('digested', 'integer', (c) => c.notNull().defaultTo(0))
            .execute();
        // What the digests before this migration already named, by their rule (the day or week
        // before each digest's time), is marked named: the first digest after it repeats none.
        const period = sql`case when exists (select 1 from feed_settings f where f.subscription_id = s.id and f.digest = 'weekly') then 604800000 else 86400000 end`;
        await sql`update feed_held set digested = 1 where held_at <= (
          select s.next_digest_at - ${period} from feed_subscriptions s where s.id = feed_held.subscription_id)`.execute(
          db,
        );
        await sql`update invoices_paid set digested = 1 where paid_at <= (
          select max(s.next_digest_at - ${period}) from feed_subscriptions s
          where s.installation_id = invoices_paid.installation_id and s.channel_id = invoices_paid.channel_id
            and s.state = 'active')`.execute(db);
      },
    },
  };
}
