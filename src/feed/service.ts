import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import { type AccessPolicy, feedChannelRefusal, type Refusal } from '../access.js';
import { enqueue, type OutboxRow, type OutgoingEntry } from '../outbox.js';
import { type BalanceEntry, InvalidApiKeyError, isPaymentError } from '../payments/index.js';
import type { Tracked } from '../pipeline/tracked.js';
import type { BackgroundDeps, Job } from '../scheduler.js';
import { KEY_PROBE_MS } from '../service-state.js';
import { SlackPostError } from '../slack/calls.js';
import type { Tables } from '../store/schema.js';
import {
  digestMessage,
  feedMessage,
  feedStoppedNotice,
  keyRejectedNotice,
  type SubscriptionListItem,
  subscribedMessage,
  unsubscribedMessage,
} from '../views/feed.js';
import { md } from '../views/mrkdwn.js';
import { balanceChanges, type StoredBalance, toStored } from './deltas.js';
import { type DigestTime, formatDigestTime, nextDigestAt } from './schedule.js';

export type SubscriptionRow = Selectable<Tables['feed_subscriptions']>;
type SingletonRow = Selectable<Tables['singletons']>;

const BALANCE_POLL = 'balance_poll';
const DAY_MS = 24 * 3_600_000;
/** A digest more than this late (the bot was down at its time) is skipped, not sent. */
export const LATE_DIGEST_LIMIT_MS = 12 * 3_600_000;
/** A digest this late or later is marked late. */
const LATE_MARK_MS = 5 * 60_000;
/** Balance readings and feed changes older than this are deleted (the digest looks back 24 h). */
const KEEP_HISTORY_MS = 8 * DAY_MS;

export interface FeedDeps extends BackgroundDeps {
  pollSeconds: number;
  /** Where the feed may go besides private channels (BALANCE_ALLOWED_CHANNELS). */
  policy: Pick<AccessPolicy, 'allowedChannels'>;
}

export interface SubscribeRequest {
  teamId: string;
  channelId: string;
  userId: string;
  digest: DigestTime;
}

export type SubscribeResult =
  | { kind: 'subscribed'; digest: string }
  | { kind: 'already'; digest: string; since: Date }
  | { kind: 'refused'; refusal: Refusal }
  | { kind: 'not_in_channel' };

export type UnsubscribeResult = { kind: 'unsubscribed' } | { kind: 'not_subscribed' };

const digestOf = (s: SubscriptionRow): DigestTime => ({
  hour: s.digest_hour,
  minute: s.digest_minute,
  zone: s.digest_zone,
});

class LeaseLost extends Error {}

/**
 * The payments feed: the balance is the one place every payment shows, so one reading every
 * BALANCE_POLL_SECONDS serves every subscribed channel; what moved is posted there, exactly
 * (big.js), once (the reading and its messages are one transaction), and a digest goes out once
 * a day at each channel's local time.
 */
export function createFeed(deps: FeedDeps) {
  const { store, payments, poster, state, logger, clock, owner, policy } = deps;
  const { db } = store;
  const leaseMs = deps.leaseMs ?? 30_000;
  const pollMs = deps.pollSeconds * 1000;

  const activeSubscriptions = (trx: Kysely<Tables>) =>
    trx
      .selectFrom('feed_subscriptions')
      .selectAll()
      .where('state', '=', 'active')
      .orderBy('created_at')
      .execute();

  const latestReading = (trx: Kysely<Tables>, atOrBefore?: number) =>
    trx
      .selectFrom('balance_history')
      .selectAll()
      .$if(atOrBefore !== undefined, (q) => q.where('taken_at', '<=', atOrBefore ?? 0))
      .orderBy('taken_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();

  const oldestReading = (trx: Kysely<Tables>) =>
    trx
      .selectFrom('balance_history')
      .selectAll()
      .orderBy('taken_at')
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();

  /** Why this channel may not receive the feed now, if it may not; `not_in_channel` when the bot cannot see it. */
  async function channelProblem(channelId: string): Promise<Refusal | 'not_in_channel' | undefined> {
    try {
      return feedChannelRefusal(policy, channelId, await poster.conversation(channelId));
    } catch (error) {
      if (
        error instanceof SlackPostError &&
        (error.failure === 'not_in_channel' || error.failure === 'refused')
      ) {
        return 'not_in_channel';
      }
      throw error;
    }
  }

  async function endSubscription(trx: Kysely<Tables>, sub: SubscriptionRow, reason: string, now: number) {
    const result = await trx
      .updateTable('feed_subscriptions')
      .set({ state: 'ended', ended_at: now, end_reason: reason, lease_owner: null, lease_until: null })
      .where('id', '=', sub.id)
      .where('state', '=', 'active')
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  const feedEntry = (sub: SubscriptionRow, message: OutgoingEntry['message']): OutgoingEntry => ({
    channel: sub.channel_id,
    message,
    subscriptionId: sub.id,
  });

  async function poll(_row: SingletonRow): Promise<Tracked> {
    const now = clock();
    let entries: readonly BalanceEntry[];
    try {
      entries = await payments.getBalance({ background: true });
    } catch (error) {
      if (!isPaymentError(error)) throw error;
      const rejected = error instanceof InvalidApiKeyError;
      if (rejected) await state.markKeyRejected(now);
      await store.transaction(async (trx) => {
        await release(trx, { next_run_at: now + (rejected ? KEY_PROBE_MS : pollMs) });
        if (!rejected) return;
        // Said once in each feed channel, not every minute.
        const unaware = (await activeSubscriptions(trx)).filter((s) => s.key_notice_at === null);
        await enqueue(
          trx,
          unaware.map((s) => feedEntry(s, keyRejectedNotice())),
          now,
        );
        for (const s of unaware) {
          await trx
            .updateTable('feed_subscriptions')
            .set({ key_notice_at: now })
            .where('id', '=', s.id)
            .execute();
        }
      });
      deps.wakeOutbox?.();
      return rejected ? { outcome: 'paused' } : { outcome: error.code };
    }
    await state.markKeyAccepted();

    const current = toStored(entries);
    try {
      const announced = await store.transaction(async (trx) => {
        await release(trx, { next_run_at: now + pollMs, last_success_at: now });
        await trx
          .updateTable('feed_subscriptions')
          .set({ key_notice_at: null })
          .where('key_notice_at', 'is not', null)
          .execute();
        await trx
          .deleteFrom('balance_history')
          .where('taken_at', '<', now - KEEP_HISTORY_MS)
          .execute();
        await trx
          .deleteFrom('feed_changes')
          .where('at', '<', now - KEEP_HISTORY_MS)
          .execute();
        const latest = await latestReading(trx);
        const changes = latest ? balanceChanges(JSON.parse(latest.balances) as StoredBalance, current) : [];
        if (latest && changes.length === 0) return 0;
        await trx
          .insertInto('balance_history')
          .values({ taken_at: now, balances: JSON.stringify(current) })
          .execute();
        if (changes.length === 0) return 0;
        await trx
          .insertInto('feed_changes')
          .values(
            changes.map((c) => ({
              at: now,
              currency: c.currency,
              direction: c.delta.sign() > 0 ? 'rise' : 'fall',
            })),
          )
          .execute();
        const message = feedMessage(changes, new Date(now));
        const subs = await activeSubscriptions(trx);
        await enqueue(
          trx,
          subs.map((s) => feedEntry(s, message)),
          now,
        );
        return changes.length;
      });
      if (announced > 0) deps.wakeOutbox?.();
      return {
        outcome: announced > 0 ? 'changed' : 'unchanged',
        quiet: announced === 0,
        counts: { currencies: announced },
      };
    } catch (error) {
      if (error instanceof LeaseLost) return { outcome: 'lease_lost' };
      throw error;
    }
  }

  /** Records the poll's next run and releases its lease, only while this instance holds it. */
  async function release(trx: Kysely<Tables>, values: Partial<SingletonRow>): Promise<void> {
    const result = await trx
      .updateTable('singletons')
      .set({ ...values, lease_owner: null, lease_until: null })
      .where('name', '=', BALANCE_POLL)
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) throw new LeaseLost();
  }

  async function digest(sub: SubscriptionRow): Promise<Tracked> {
    const now = clock();
    const lateBy = now - sub.next_digest_at;
    const next = nextDigestAt(digestOf(sub), now);
    try {
      const sent = await store.transaction(async (trx) => {
        const result = await trx
          .updateTable('feed_subscriptions')
          .set({ next_digest_at: next, lease_owner: null, lease_until: null })
          .where('id', '=', sub.id)
          .where('lease_owner', '=', owner)
          .where('state', '=', 'active')
          .executeTakeFirst();
        if (result.numUpdatedRows === 0n) throw new LeaseLost();
        if (lateBy >= LATE_DIGEST_LIMIT_MS) return false;
        const latest = await latestReading(trx);
        if (!latest) return false;
        const dayAgo = (await latestReading(trx, now - DAY_MS)) ?? (await oldestReading(trx));
        const counts = await trx
          .selectFrom('feed_changes')
          .select(['direction', (eb) => eb.fn.countAll<number>().as('n')])
          .where('at', '>', now - DAY_MS)
          .groupBy('direction')
          .execute();
        const count = (direction: 'rise' | 'fall') =>
          Number(counts.find((c) => c.direction === direction)?.n ?? 0);
        const poll = await trx
          .selectFrom('singletons')
          .selectAll()
          .where('name', '=', BALANCE_POLL)
          .executeTakeFirst();
        const message = digestMessage({
          balances: JSON.parse(latest.balances) as StoredBalance,
          asOf: new Date(poll?.last_success_at ?? latest.taken_at),
          before:
            dayAgo && dayAgo.id !== latest.id ? (JSON.parse(dayAgo.balances) as StoredBalance) : undefined,
          beforeAt: dayAgo && dayAgo.id !== latest.id ? new Date(dayAgo.taken_at) : undefined,
          rises: count('rise'),
          falls: count('fall'),
          lateByMs: lateBy >= LATE_MARK_MS ? lateBy : undefined,
        });
        await enqueue(trx, [feedEntry(sub, message)], now);
        return true;
      });
      if (!sent) {
        if (lateBy >= LATE_DIGEST_LIMIT_MS) {
          logger.warn(
            { channel: sub.channel_id, lateMinutes: Math.round(lateBy / 60_000) },
            'a digest more than 12 hours late was skipped',
          );
        }
        return { outcome: 'unchanged', quiet: true };
      }
      deps.wakeOutbox?.();
      return { outcome: 'sent' };
    } catch (error) {
      if (error instanceof LeaseLost) return { outcome: 'lease_lost' };
      throw error;
    }
  }

  return {
    /** Who may turn a feed on, the caller has asked the access rules; the channel, this asks. */
    async subscribe(req: SubscribeRequest): Promise<SubscribeResult> {
      const existing = await db
        .selectFrom('feed_subscriptions')
        .selectAll()
        .where('channel_id', '=', req.channelId)
        .where('state', '=', 'active')
        .executeTakeFirst();
      if (existing)
        return {
          kind: 'already',
          digest: formatDigestTime(digestOf(existing)),
          since: new Date(existing.created_at),
        };
      const problem = await channelProblem(req.channelId);
      if (problem === 'not_in_channel') return { kind: 'not_in_channel' };
      if (problem) return { kind: 'refused', refusal: problem };

      const entries = await payments.getBalance();
      const now = clock();
      const digest = formatDigestTime(req.digest);
      const balances = toStored(entries);
      try {
        await poster.post({
          channel: req.channelId,
          ...subscribedMessage({
            channelId: req.channelId,
            userId: req.userId,
            digest,
            balances,
            readAt: new Date(now),
            pollSeconds: deps.pollSeconds,
          }),
        });
      } catch (error) {
        if (error instanceof SlackPostError && error.failure === 'not_in_channel')
          return { kind: 'not_in_channel' };
        throw error;
      }
      await store.transaction(async (trx) => {
        // The first feed starts from this reading; later ones join the running feed, whose last
        // reading stays the baseline so no change is skipped for the channels already subscribed.
        if ((await activeSubscriptions(trx)).length === 0) {
          await trx
            .insertInto('balance_history')
            .values({ taken_at: now, balances: JSON.stringify(balances) })
            .execute();
        }
        await trx
          .insertInto('feed_subscriptions')
          .values({
            id: randomUUID(),
            team_id: req.teamId,
            channel_id: req.channelId,
            subscriber_id: req.userId,
            digest_hour: req.digest.hour,
            digest_minute: req.digest.minute,
            digest_zone: req.digest.zone,
            state: 'active',
            created_at: now,
            ended_at: null,
            end_reason: null,
            next_digest_at: nextDigestAt(req.digest, now),
            lease_owner: null,
            lease_until: null,
            key_notice_at: null,
          })
          .execute();
        await trx
          .insertInto('singletons')
          .values({
            name: BALANCE_POLL,
            next_run_at: now + pollMs,
            lease_owner: null,
            lease_until: null,
            last_success_at: now,
          })
          .onConflict((oc) => oc.column('name').doNothing())
          .execute();
      });
      return { kind: 'subscribed', digest };
    },

    /** Who may turn a feed off, the caller has asked the access rules. */
    async unsubscribe(req: { channelId: string; userId: string }): Promise<UnsubscribeResult> {
      const now = clock();
      const ended = await store.transaction(async (trx) => {
        const sub = await trx
          .selectFrom('feed_subscriptions')
          .selectAll()
          .where('channel_id', '=', req.channelId)
          .where('state', '=', 'active')
          .executeTakeFirst();
        if (!sub || !(await endSubscription(trx, sub, 'unsubscribed', now))) return false;
        await enqueue(trx, [{ channel: sub.channel_id, message: unsubscribedMessage(req.userId) }], now);
        return true;
      });
      if (ended) deps.wakeOutbox?.();
      return ended ? { kind: 'unsubscribed' } : { kind: 'not_subscribed' };
    },

    /** The workspace's feeds, oldest first. */
    async list(teamId: string): Promise<SubscriptionListItem[]> {
      const subs = await db
        .selectFrom('feed_subscriptions')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('state', '=', 'active')
        .orderBy('created_at')
        .execute();
      return subs.map((s) => ({
        channelId: s.channel_id,
        subscriberId: s.subscriber_id,
        digest: formatDigestTime(digestOf(s)),
        since: new Date(s.created_at),
      }));
    },

    /**
     * Just before a feed message goes out: is the channel still one the feed may go to? A
     * channel shared with another organisation since, a DM, or one the bot was removed from
     * ends the subscription, and the subscriber is told why, privately.
     */
    async mayDeliver(row: OutboxRow): Promise<boolean> {
      if (!row.subscription_id) return true;
      const sub = await db
        .selectFrom('feed_subscriptions')
        .selectAll()
        .where('id', '=', row.subscription_id)
        .executeTakeFirst();
      if (sub?.state !== 'active') return false;
      const problem = await channelProblem(sub.channel_id);
      if (!problem) return true;
      const now = clock();
      const why =
        problem === 'shared_channel'
          ? md`the channel is now shared with another organisation`
          : problem === 'not_in_channel'
            ? md`the bot can no longer see the channel`
            : md`the channel is no longer private`;
      await store.transaction(async (trx) => {
        if (!(await endSubscription(trx, sub, problem, now))) return;
        await enqueue(
          trx,
          [
            {
              channel: sub.subscriber_id,
              message: feedStoppedNotice(sub.channel_id, why),
            },
          ],
          now,
        );
      });
      logger.warn(
        { channel: sub.channel_id, reason: problem },
        'payments feed stopped: the channel may no longer receive it',
      );
      deps.wakeOutbox?.();
      return false;
    },

    pollJob(): Job<SingletonRow> {
      return {
        name: 'feed_poll',
        concurrency: 1,
        idleMs: 1000,
        dueAt: (row) => row.next_run_at,
        nextDueAt: async () =>
          (
            await db
              .selectFrom('singletons')
              .select('next_run_at')
              .where('name', '=', BALANCE_POLL)
              .executeTakeFirst()
          )?.next_run_at,
        async claim(now, limit) {
          if (
            (
              await db
                .selectFrom('feed_subscriptions')
                .select('id')
                .where('state', '=', 'active')
                .limit(1)
                .execute()
            ).length === 0
          ) {
            return [];
          }
          return state.claimWithin(now, limit, () =>
            db
              .updateTable('singletons')
              .set({ lease_owner: owner, lease_until: now + leaseMs })
              .where('name', '=', BALANCE_POLL)
              .where('next_run_at', '<=', now)
              .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<', now)]))
              .returningAll()
              .execute(),
          );
        },
        run: poll,
      };
    },

    digestJob(): Job<SubscriptionRow> {
      return {
        name: 'feed_digest',
        concurrency: 2,
        idleMs: 30_000,
        dueAt: (sub) => sub.next_digest_at,
        nextDueAt: async (now) =>
          (
            await db
              .selectFrom('feed_subscriptions')
              .select((eb) => eb.fn.min<number>('next_digest_at').as('next'))
              .where('state', '=', 'active')
              .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<', now)]))
              .executeTakeFirst()
          )?.next ?? undefined,
        claim: async (now, limit) =>
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
                  .where((w) => w.or([w('s.lease_until', 'is', null), w('s.lease_until', '<', now)]))
                  .orderBy('s.next_digest_at')
                  .limit(limit)
                  .$if(store.dialect === 'postgres', (q) => q.forUpdate().skipLocked()),
              )
              .returningAll()
              .execute()
          ).sort((a, b) => a.next_digest_at - b.next_digest_at),
        run: digest,
      };
    },
  };
}

export type Feed = ReturnType<typeof createFeed>;
