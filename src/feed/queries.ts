import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import type { BalanceChange, StoredBalance } from '../domain/balance.js';
import { enqueue, type OutgoingEntry } from '../outbox.js';
import type { Store } from '../store/database.js';
import { LeaseLost, leaseFree } from '../store/lease.js';
import type { Tables } from '../store/schema.js';
import type { DigestTime } from './schedule.js';

export type SubscriptionRow = Selectable<Tables['feed_subscriptions']>;
/** The balance poll's row: one per installation, however many instances run. */
export type PollRow = Selectable<Tables['singletons']>;

const BALANCE_POLL = 'balance_poll';

/** A subscription's digest time. */
export const digestOf = (s: SubscriptionRow): DigestTime => ({
  hour: s.digest_hour,
  minute: s.digest_minute,
  zone: s.digest_zone,
});

/**
 * The store's side of the feed: every query the feed makes, and nothing else. Each reads and
 * writes only `installation`'s rows ('' is the one workspace's); claiming due polls and digests
 * is across installations: the scheduler serves them all.
 */
export function feedQueries(store: Store, installation = '') {
  const { db } = store;
  const activeRows = (trx: Kysely<Tables>) =>
    trx
      .selectFrom('feed_subscriptions')
      .selectAll()
      .where('installation_id', '=', installation)
      .where('state', '=', 'active');
  const polls = (trx: Kysely<Tables>) =>
    trx.selectFrom('singletons').where('installation_id', '=', installation).where('name', '=', BALANCE_POLL);
  const readings = (trx: Kysely<Tables>) =>
    trx.selectFrom('balance_history').selectAll().where('installation_id', '=', installation);
  /** A poll whose installation has a feed running: the first feed starts it, and it rests once the last ends. */
  const withFeed = ({ exists, selectFrom }: ExpressionBuilder<Tables, 'singletons'>) =>
    exists(
      selectFrom('feed_subscriptions as f')
        .select('f.id')
        .whereRef('f.installation_id', '=', 'singletons.installation_id')
        .where('f.state', '=', 'active'),
    );

  return {
    /**
     * Whether the installation's payment account is still the one connected at `account` (many
     * workspaces; the one workspace's key is the environment's and never changes). Read with a
     * share lock on PostgreSQL: a Replace key or Disconnect commits before this or after the
     * transaction holding it, never in between.
     */
    async readsAccount(trx: Kysely<Tables>, account: number | undefined): Promise<boolean> {
      if (installation === '') return true;
      const row = await trx
        .selectFrom('installations')
        .select('payment_key_connected_at')
        .where('id', '=', installation)
        .$if(store.dialect === 'postgres', (q) => q.forShare())
        .executeTakeFirst();
      return (
        row !== undefined &&
        row.payment_key_connected_at !== null &&
        Number(row.payment_key_connected_at) === account
      );
    },

    /** The channel's active subscription, if any. */
    activeInChannel: (trx: Kysely<Tables>, channelId: string) =>
      activeRows(trx).where('channel_id', '=', channelId).executeTakeFirst(),

    /** A subscription of this installation by id: another installation's is none. */
    byId: (id: string) =>
      db
        .selectFrom('feed_subscriptions')
        .selectAll()
        .where('installation_id', '=', installation)
        .where('id', '=', id)
        .executeTakeFirst(),

    /** Every active subscription, oldest first. */
    active: (trx: Kysely<Tables>) => activeRows(trx).orderBy('created_at').execute(),

    /** The workspace's active subscriptions, oldest first. */
    listInTeam: (teamId: string) =>
      activeRows(db).where('team_id', '=', teamId).orderBy('created_at').execute(),

    async insert(trx: Kysely<Tables>, sub: Omit<SubscriptionRow, 'installation_id'>): Promise<void> {
      await trx
        .insertInto('feed_subscriptions')
        .values({ ...sub, installation_id: installation })
        .execute();
    },

    /** Ends an active subscription; false when it had already ended. */
    async end(trx: Kysely<Tables>, id: string, reason: string, now: number): Promise<boolean> {
      const result = await trx
        .updateTable('feed_subscriptions')
        .set({ state: 'ended', ended_at: now, end_reason: reason, lease_owner: null, lease_until: null })
        .where('installation_id', '=', installation)
        .where('id', '=', id)
        .where('state', '=', 'active')
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /** Queues messages to send with this installation's token. */
    tell: (trx: Kysely<Tables>, entries: readonly OutgoingEntry[], now: number) =>
      enqueue(trx, entries, now, installation),

    /**
     * Queues a message to each subscription's channel, tagged with the subscription so the
     * outbox asks `mayDeliver` about the channel just before it goes.
     */
    enqueueTo: (
      trx: Kysely<Tables>,
      subs: readonly Pick<SubscriptionRow, 'id' | 'channel_id'>[],
      message: OutgoingEntry['message'],
      now: number,
    ) =>
      enqueue(
        trx,
        subs.map((s) => ({ channel: s.channel_id, message, subscriptionId: s.id })),
        now,
        installation,
      ),

    /** Notes that these channels were told the key is rejected. */
    async markKeyNoticed(
      trx: Kysely<Tables>,
      subs: readonly Pick<SubscriptionRow, 'id'>[],
      now: number,
    ): Promise<void> {
      if (subs.length === 0) return;
      await trx
        .updateTable('feed_subscriptions')
        .set({ key_notice_at: now })
        .where('installation_id', '=', installation)
        .where(
          'id',
          'in',
          subs.map((s) => s.id),
        )
        .execute();
    },

    /** The key works again: each channel is told again should it be rejected later. */
    async clearKeyNotices(trx: Kysely<Tables>): Promise<void> {
      await trx
        .updateTable('feed_subscriptions')
        .set({ key_notice_at: null })
        .where('installation_id', '=', installation)
        .where('key_notice_at', 'is not', null)
        .execute();
    },

    /** The last reading, or the last one taken at or before `atOrBefore`. */
    latestReading: (trx: Kysely<Tables>, atOrBefore?: number) =>
      readings(trx)
        .$if(atOrBefore !== undefined, (q) => q.where('taken_at', '<=', atOrBefore ?? 0))
        .orderBy('taken_at', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst(),

    oldestReading: (trx: Kysely<Tables>) =>
      readings(trx).orderBy('taken_at').orderBy('id').limit(1).executeTakeFirst(),

    async insertReading(trx: Kysely<Tables>, takenAt: number, balances: StoredBalance): Promise<void> {
      await trx
        .insertInto('balance_history')
        .values({ installation_id: installation, taken_at: takenAt, balances: JSON.stringify(balances) })
        .execute();
    },

    /** Records which way each currency moved, for the digest's counts. */
    async insertChanges(trx: Kysely<Tables>, at: number, changes: readonly BalanceChange[]): Promise<void> {
      await trx
        .insertInto('feed_changes')
        .values(
          changes.map((c) => ({
            installation_id: installation,
            at,
            currency: c.currency,
            direction: c.delta.sign() > 0 ? 'rise' : 'fall',
          })),
        )
        .execute();
    },

    /** How many rises and falls were announced after `since`. */
    async changeCounts(trx: Kysely<Tables>, since: number): Promise<{ rises: number; falls: number }> {
      const counts = await trx
        .selectFrom('feed_changes')
        .select(['direction', (eb) => eb.fn.countAll<number>().as('n')])
        .where('installation_id', '=', installation)
        .where('at', '>', since)
        .groupBy('direction')
        .execute();
      const count = (direction: 'rise' | 'fall') =>
        Number(counts.find((c) => c.direction === direction)?.n ?? 0);
      return { rises: count('rise'), falls: count('fall') };
    },

    /**
     * Deletes the readings and the changes from before `before`, never the newest reading: it is
     * what the next one is compared with, however long the balance has not moved (a reading is
     * stored only when it did).
     */
    async pruneHistory(trx: Kysely<Tables>, before: number): Promise<void> {
      await trx
        .deleteFrom('balance_history')
        .where('installation_id', '=', installation)
        .where('taken_at', '<', before)
        .where('id', 'not in', (eb) =>
          eb
            .selectFrom('balance_history as newest')
            .select('newest.id')
            .where('newest.installation_id', '=', installation)
            .orderBy('newest.taken_at', 'desc')
            .orderBy('newest.id', 'desc')
            .limit(1),
        )
        .execute();
      await trx
        .deleteFrom('feed_changes')
        .where('installation_id', '=', installation)
        .where('at', '<', before)
        .execute();
    },

    /** Creates the balance poll unless a feed already did: the first feed starts it. */
    async startPoll(trx: Kysely<Tables>, nextRunAt: number, lastSuccessAt: number): Promise<void> {
      await trx
        .insertInto('singletons')
        .values({
          installation_id: installation,
          name: BALANCE_POLL,
          next_run_at: nextRunAt,
          lease_owner: null,
          lease_until: null,
          last_success_at: lastSuccessAt,
        })
        .onConflict((oc) => oc.columns(['installation_id', 'name']).doNothing())
        .execute();
    },

    /** When the balance was last read successfully by the poll, if ever. */
    pollSucceededAt: async (trx: Kysely<Tables>) =>
      (await polls(trx).select('last_success_at').executeTakeFirst())?.last_success_at,

    /** When the next poll not leased to anyone falls due, of any installation with a feed. */
    nextPollDueAt: async (now: number) =>
      (
        await db
          .selectFrom('singletons')
          .select((eb) => eb.fn.min<number>('next_run_at').as('next'))
          .where('name', '=', BALANCE_POLL)
          .where(leaseFree('lease_until', now))
          .where(withFeed)
          .executeTakeFirst()
      )?.next ?? undefined,

    /**
     * Takes up to `limit` due polls of installations with a feed, the longest overdue first,
     * leased to `owner` until `now + leaseMs`: each installation's balance is read by one
     * instance at a time.
     */
    claimPolls: async (owner: string, now: number, limit: number, leaseMs: number): Promise<PollRow[]> =>
      (
        await db
          .updateTable('singletons')
          .set({ lease_owner: owner, lease_until: now + leaseMs })
          .where('name', '=', BALANCE_POLL)
          .where('installation_id', 'in', (eb) =>
            eb
              .selectFrom('singletons')
              .select('installation_id')
              .where('name', '=', BALANCE_POLL)
              .where('next_run_at', '<=', now)
              .where(leaseFree('lease_until', now))
              .where(withFeed)
              .orderBy('next_run_at')
              .limit(limit)
              .$if(store.dialect === 'postgres', (q) => q.forUpdate().skipLocked()),
          )
          .returningAll()
          .execute()
      ).sort((a, b) => a.next_run_at - b.next_run_at),

    /** Records the poll's next run and releases its lease, only while `owner` holds it; else LeaseLost. */
    async releasePoll(trx: Kysely<Tables>, owner: string, values: Partial<PollRow>): Promise<void> {
      const result = await trx
        .updateTable('singletons')
        .set({ ...values, lease_owner: null, lease_until: null })
        .where('installation_id', '=', installation)
        .where('name', '=', BALANCE_POLL)
        .where('lease_owner', '=', owner)
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) throw new LeaseLost();
    },

    /** When the next digest not leased to anyone falls due, of any installation. */
    nextDigestDueAt: async (now: number) =>
      (
        await db
          .selectFrom('feed_subscriptions')
          .select((eb) => eb.fn.min<number>('next_digest_at').as('next'))
          .where('state', '=', 'active')
          .where(leaseFree('lease_until', now))
          .executeTakeFirst()
      )?.next ?? undefined,

    /**
     * Takes up to `limit` subscriptions whose digest is due, of any installation, the earliest
     * first, leased to `owner` until `now + leaseMs` (RETURNING has no order of its own, so they
     * are sorted here).
     */
    claimDigests: async (
      owner: string,
      now: number,
      limit: number,
      leaseMs: number,
    ): Promise<SubscriptionRow[]> =>
      (
        await db
          .updateTable('feed_subscriptions')
          .set({ lease_owner: owner, lease_until: now + leaseMs })
          .where('id', 'in', (eb) =>
            eb
              .selectFrom('feed_subscriptions as s')
              .select('s.id')
              .where('s.state', '=', 'active')
              .where('s.next_digest_at', '<=', now)
              .where(leaseFree('s.lease_until', now))
              .orderBy('s.next_digest_at')
              .limit(limit)
              .$if(store.dialect === 'postgres', (q) => q.forUpdate().skipLocked()),
          )
          .returningAll()
          .execute()
      ).sort((a, b) => a.next_digest_at - b.next_digest_at),

    /**
     * Gives an active subscription another digest time, due next at `next`; false when it has
     * ended. A digest being sent meanwhile loses its lease (it is sent at the new time instead),
     * so it cannot put the old time back.
     */
    async moveDigest(trx: Kysely<Tables>, id: string, digest: DigestTime, next: number): Promise<boolean> {
      const result = await trx
        .updateTable('feed_subscriptions')
        .set({
          digest_hour: digest.hour,
          digest_minute: digest.minute,
          digest_zone: digest.zone,
          next_digest_at: next,
          lease_owner: null,
          lease_until: null,
        })
        .where('installation_id', '=', installation)
        .where('id', '=', id)
        .where('state', '=', 'active')
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /**
     * Moves an active subscription's digest to `next` and releases its lease, only while `owner`
     * holds it; else LeaseLost.
     */
    async rescheduleDigest(trx: Kysely<Tables>, owner: string, id: string, next: number): Promise<void> {
      const result = await trx
        .updateTable('feed_subscriptions')
        .set({ next_digest_at: next, lease_owner: null, lease_until: null })
        .where('installation_id', '=', installation)
        .where('id', '=', id)
        .where('lease_owner', '=', owner)
        .where('state', '=', 'active')
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) throw new LeaseLost();
    },
  };
}

export type FeedQueries = ReturnType<typeof feedQueries>;
