import type { Store } from '../../src/store/database.js';
import type { EndingTable } from '../../src/store/retention.js';

const DAY = 86_400_000;

/**
 * Rows of watches or feeds, by id: each active, or ended that many days before `now`. Only what
 * the retention and the counts read is meaningful.
 */
export async function endingRows(
  store: Store,
  table: EndingTable,
  now: number,
  rows: Record<string, 'active' | number>,
): Promise<void> {
  for (const [id, end] of Object.entries(rows)) {
    const state = end === 'active' ? 'active' : 'ended';
    const ended_at = end === 'active' ? null : now - end * DAY;
    const common = { id, team_id: 'T0', channel_id: `C${id}`, state, ended_at, end_reason: null } as const;
    if (table === 'watches')
      await store.db
        .insertInto('watches')
        .values({
          ...common,
          invoice_id: `inv-${id}`,
          watcher_id: 'U0',
          card_ts: '1.1',
          thread_ts: '1.1',
          started_at: now - 100 * DAY,
          ends_at: now + DAY,
        })
        .execute();
    else
      await store.db
        .insertInto('feed_subscriptions')
        .values({
          ...common,
          subscriber_id: 'U0',
          digest_hour: 9,
          digest_minute: 0,
          digest_zone: 'UTC',
          created_at: now - 100 * DAY,
          next_digest_at: now + DAY,
          lease_owner: null,
          lease_until: null,
          key_notice_at: null,
        })
        .execute();
  }
}

/** The ids left in `table`, sorted. */
export const idsIn = async (store: Store, table: EndingTable) =>
  (await store.db.selectFrom(table).select('id').orderBy('id').execute()).map((r) => r.id);
