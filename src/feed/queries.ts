import type { Insertable, Kysely, Selectable } from 'kysely';
import { enqueue, type OutgoingEntry } from '../outbox.js';
import { leasing, nextFreeAt, type Queue, releaseHeld, UNLEASED } from '../runner/leases.js';
import type { Store } from '../store/database.js';
import { type InstallationId, ONE_WORKSPACE } from '../store/keys.js';
import type { Tables } from '../store/schema.js';
import { paidInvoiceQueries } from './paid-invoices.js';
import { historyQueries } from './queries-history.js';
import { pollClaims, pollQueries } from './queries-poll.js';
import { settingsQueries } from './queries-settings.js';

export { POLLS } from './queries-poll.js';

import type { DigestTime } from './schedule.js';

export type SubscriptionRow = Selectable<Tables['feed_subscriptions']>;
/** A subscription as it is started: what its digests reach is the store's to fill in. */
export type NewSubscription = Omit<Insertable<Tables['feed_subscriptions']>, 'installation_id'>;

/**
 * The daily digests as the runner leases them: one a subscription, due at `next_digest_at`; one
 * given back is held, still due when it was (a digest's day is its due time's).
 */
export const DIGESTS: Queue<'feed_subscriptions'> = {
  table: 'feed_subscriptions',
  key: ['id'],
  due: 'next_digest_at',
  holds: true,
};
export type { PollRow } from './queries-poll.js';

/** Leases the subscriptions whose digest is due, the earliest first. */
const leaseDigests = leasing(DIGESTS, 's', (db, { now, limit }: { now: number; limit: number }) =>
  db
    .selectFrom('feed_subscriptions as s')
    .select('s.id')
    .where('s.state', '=', 'active')
    .where('s.next_digest_at', '<=', now)
    .orderBy('s.next_digest_at')
    .limit(limit),
);

/** A subscription's digest time. */
export const digestOf = (s: SubscriptionRow): DigestTime => ({
  hour: s.digest_hour,
  minute: s.digest_minute,
  zone: s.digest_zone,
});

/**
 * The store's side of the feed: every query an installation's feed makes, and nothing else. Each
 * reads and writes only `installation`'s rows; claiming due polls and digests is across
 * installations, and another object's (`feedClaims`).
 */
export function feedQueries(store: Store, installation: InstallationId) {
  return {
    ...subscriptionQueries(store, installation),
    ...messageQueries(store, installation),
    ...historyQueries(installation),
    ...pollQueries(installation),
    ...digestQueries(installation),
    ...settingsQueries(installation),
    paid: paidInvoiceQueries(installation),
  };
}

/** The feed's work across installations: the scheduler's claims of due polls and digests. No query here is one installation's. */
export function feedClaims(store: Store) {
  return { ...pollClaims(store), ...digestClaims(store) };
}

export type FeedQueries = ReturnType<typeof feedQueries>;

/** The installation's subscriptions: finding them, starting and ending them, moving their digest. */
function subscriptionQueries(store: Store, installation: InstallationId) {
  const { db } = store;
  const activeRows = (trx: Kysely<Tables>) =>
    trx
      .selectFrom('feed_subscriptions')
      .selectAll()
      .where('installation_id', '=', installation)
      .where('state', '=', 'active');

  return {
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

    /** An active subscription of this installation by id, read in `trx`. */
    activeById: (trx: Kysely<Tables>, id: string) => activeRows(trx).where('id', '=', id).executeTakeFirst(),

    /** Every active subscription, oldest first. */
    active: (trx: Kysely<Tables>) => activeRows(trx).orderBy('created_at').execute(),

    /** The workspace's active subscriptions, oldest first. */
    listInTeam: (teamId: string) =>
      activeRows(db).where('team_id', '=', teamId).orderBy('created_at').execute(),

    async insert(trx: Kysely<Tables>, sub: NewSubscription): Promise<void> {
      await trx
        .insertInto('feed_subscriptions')
        .values({ ...sub, installation_id: installation })
        .execute();
    },

    /** Ends an active subscription, its settings and held movements with it; false when it had already ended. */
    async end(trx: Kysely<Tables>, id: string, reason: string, now: number): Promise<boolean> {
      const result = await trx
        .updateTable('feed_subscriptions')
        .set({ state: 'ended', ended_at: now, end_reason: reason, ...UNLEASED })
        .where('installation_id', '=', installation)
        .where('id', '=', id)
        .where('state', '=', 'active')
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return false;
      await settingsQueries(installation).forget(trx, id);
      return true;
    },

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
          ...UNLEASED,
        })
        .where('installation_id', '=', installation)
        .where('id', '=', id)
        .where('state', '=', 'active')
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
  };
}

/**
 * What the feed tells its channels, and what it keeps of the payment key it reads the balance
 * with: whether it is still the one connected, and which channels were told it is rejected.
 */
function messageQueries(store: Store, installation: InstallationId) {
  return {
    /**
     * Whether the installation's payment account is still the one connected at `account` (many
     * workspaces; the one workspace's key is the environment's and never changes). Read with a
     * share lock on PostgreSQL: a Replace key or Disconnect commits before this or after the
     * transaction holding it, never in between.
     */
    async readsAccount(trx: Kysely<Tables>, account: number | undefined): Promise<boolean> {
      if (installation === ONE_WORKSPACE) return true;
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

    /** Whether a message of this installation to `channel` still waits in the outbox (its lane is busy). */
    async waitingIn(channel: string): Promise<boolean> {
      const row = await store.db
        .selectFrom('outbox')
        .select('id')
        .where('installation_id', '=', installation)
        .where('channel', '=', channel)
        .where('done_at', 'is', null)
        .executeTakeFirst();
      return row !== undefined;
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
  };
}

/** An installation's digests: moving one on once it is sent, and what it reached. */
function digestQueries(installation: InstallationId) {
  return {
    /**
     * Moves an active subscription's digest to `next` and releases its lease, only while `owner`
     * holds it; else LeaseLost.
     */
    rescheduleDigest: (trx: Kysely<Tables>, owner: string, id: string, next: number): Promise<void> =>
      releaseHeld(trx, DIGESTS, { installation_id: installation, id, state: 'active' }, owner, {
        next_digest_at: next,
      }),

    /**
     * Records what the digest being sent reached, after `rescheduleDigest` fenced it in the same
     * transaction: the next digest counts and compares from here.
     */
    async markDigestSent(
      trx: Kysely<Tables>,
      id: string,
      reached: { readingId: number; changeId: number; asOf: number },
    ): Promise<void> {
      await trx
        .updateTable('feed_subscriptions')
        .set({
          last_digest_reading_id: reached.readingId,
          last_digest_change_id: reached.changeId,
          last_digest_as_of: reached.asOf,
        })
        .where('installation_id', '=', installation)
        .where('id', '=', id)
        .execute();
    },
  };
}

/** The daily digests across installations: the scheduler's claims of due ones, and holding one back. */
function digestClaims(store: Store) {
  const { db } = store;
  return {
    /**
     * When the next digest not leased to anyone falls due, of any installation (MIN gives one row,
     * its value null when nothing is due).
     */
    nextDigestDueAt: (now: number) =>
      nextFreeAt(DIGESTS, db.selectFrom('feed_subscriptions').where('state', '=', 'active'), now),

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
      (await leaseDigests(db, { now, limit }, { owner, until: now + leaseMs }, now)).sort(
        (a, b) => a.next_digest_at - b.next_digest_at,
      ),
  };
}
