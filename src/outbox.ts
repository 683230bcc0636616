import type { Kysely, Selectable } from 'kysely';
import type { Logger } from './logger.js';
import type { Tracked } from './pipeline/tracked.js';
import type { Job } from './scheduler.js';
import { SlackPostError, type SlackPoster } from './slack/poster.js';
import type { Store } from './store/database.js';
import type { Tables } from './store/schema.js';
import type { Message } from './views/blocks.js';

/**
 * Messages the bot sends on its own, delivered from the store: the decision to send a message
 * and the message itself are written in one transaction (`enqueue`), and a job delivers them, one
 * at a time per channel, in order. A post is marked as attempted before it goes out; if the
 * process dies before it is marked sent, the next attempt first looks for it in Slack (by the id
 * in its metadata), so a crash neither loses a message nor sends it twice.
 */

export type OutboxRow = Selectable<Tables['outbox']>;

/** A message to post (`chat.postMessage`), or with `ts` an edit of that message (`chat.update`). */
export interface OutgoingEntry {
  channel: string;
  /** For a reply in a thread. */
  threadTs?: string | undefined;
  /** The message to edit. */
  ts?: string | undefined;
  message: Message;
  /** The watch this message belongs to, so the watch can end if it cannot be delivered. */
  watchId?: string | undefined;
  /** The feed subscription this message belongs to: checked just before it goes out. */
  subscriptionId?: string | undefined;
}

/** Writes messages to send, inside the caller's transaction. */
export async function enqueue(
  trx: Kysely<Tables>,
  entries: readonly OutgoingEntry[],
  now: number,
): Promise<void> {
  if (entries.length === 0) return;
  await trx
    .insertInto('outbox')
    .values(
      entries.map((e) => ({
        lane: e.channel,
        method: e.ts === undefined ? 'chat.postMessage' : 'chat.update',
        channel: e.channel,
        thread_ts: e.threadTs ?? null,
        ts: e.ts ?? null,
        message: JSON.stringify(e.message),
        watch_id: e.watchId ?? null,
        subscription_id: e.subscriptionId ?? null,
        created_at: now,
        next_attempt_at: now,
        attempts: 0,
      })),
    )
    .execute();
}

export interface OutboxDeps {
  store: Store;
  poster: SlackPoster;
  logger: Logger;
  clock: () => number;
  /** This instance's name in leases. */
  owner: string;
  leaseMs?: number;
  /** Called when a message can never be delivered: the channel is closed to the bot, or the message to edit is gone. */
  onUndeliverable?: (row: OutboxRow, error: SlackPostError) => Promise<void>;
  /**
   * Asked just before a message goes out; `false` drops it unsent. The feed uses it to stop at
   * a channel that was shared with another organisation after it subscribed.
   */
  mayDeliver?: (row: OutboxRow) => Promise<boolean>;
}

/** Give up on a message after this many transient failures (about an hour with the backoff). */
export const MAX_ATTEMPTS = 12;
/** Backoff after a transient failure: 2^attempts seconds, at most a minute... */
const backoffMs = (attempts: number) => Math.min(60_000, 1000 * 2 ** attempts);
/** ...and longer gaps later, up to ten minutes. */
const lateBackoffMs = (attempts: number) =>
  Math.min(600_000, backoffMs(attempts) * Math.max(1, attempts - 5));
/** Delivered messages are kept this long, then deleted. */
export const KEEP_DONE_MS = 24 * 3_600_000;

export function outboxJob(deps: OutboxDeps): Job<OutboxRow> {
  const { store, poster, logger, clock, owner } = deps;
  const leaseMs = deps.leaseMs ?? 30_000;
  const { db } = store;

  /** Updates the row only while this instance still holds its lease. */
  const fenced = async (row: OutboxRow, values: Partial<OutboxRow>) => {
    const result = await db
      .updateTable('outbox')
      .set(values)
      .where('id', '=', row.id)
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  };
  const finish = (row: OutboxRow, result: string) =>
    fenced(row, { done_at: clock(), result, lease_owner: null, lease_until: null });
  const later = (row: OutboxRow, delayMs: number) =>
    fenced(row, {
      next_attempt_at: clock() + delayMs,
      attempts: row.attempts + 1,
      lease_owner: null,
      lease_until: null,
    });

  /**
   * Whether an earlier attempt went out before its instance died. If Slack will not say (the
   * history scopes were not granted), the message is sent again rather than lost.
   */
  async function postedBefore(
    row: OutboxRow,
    target: { channel: string; threadTs?: string | undefined; messageId: string },
  ) {
    try {
      return (await poster.find({ ...target, oldest: row.attempted_at ?? 0 })) !== undefined;
    } catch (error) {
      if (!(error instanceof SlackPostError) || error.failure !== 'refused') throw error;
      logger.warn(
        { err: error, channel: row.channel },
        'could not look for an earlier attempt; posting again',
      );
      return false;
    }
  }

  async function send(row: OutboxRow): Promise<Tracked> {
    if (deps.mayDeliver && !(await deps.mayDeliver(row))) {
      await finish(row, 'dropped: not allowed here any more');
      return { outcome: 'dropped' };
    }
    const message = JSON.parse(row.message) as Message;
    const messageId = `outbox-${row.id}`;
    const target = { channel: row.channel, threadTs: row.thread_ts ?? undefined, ...message, messageId };
    if (row.ts !== null) {
      await poster.update({ ...target, ts: row.ts });
      await finish(row, 'sent');
      return { outcome: 'sent' };
    }
    if (row.attempted_at !== null && (await postedBefore(row, target))) {
      await finish(row, 'found');
      return { outcome: 'found' };
    }
    if (!(await fenced(row, { attempted_at: clock() }))) return { outcome: 'lease_lost' };
    await poster.post(target);
    await finish(row, 'sent');
    return { outcome: 'sent' };
  }

  return {
    name: 'outbox',
    concurrency: 4,
    idleMs: 1000,
    dueAt: (row) => row.next_attempt_at,

    async claim(now, limit) {
      await db
        .deleteFrom('outbox')
        .where('done_at', '<', now - KEEP_DONE_MS)
        .execute();
      const claimed = await db
        .updateTable('outbox')
        .set({ lease_owner: owner, lease_until: now + leaseMs })
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('outbox as o')
            .select('o.id')
            .where('o.done_at', 'is', null)
            .where('o.next_attempt_at', '<=', now)
            .where((w) => w.or([w('o.lease_until', 'is', null), w('o.lease_until', '<', now)]))
            // Only the head of each lane: a channel's messages go out in order, one at a time.
            .where(({ not, exists, selectFrom }) =>
              not(
                exists(
                  selectFrom('outbox as earlier')
                    .select('earlier.id')
                    .whereRef('earlier.lane', '=', 'o.lane')
                    .where('earlier.done_at', 'is', null)
                    .whereRef('earlier.id', '<', 'o.id'),
                ),
              ),
            )
            .orderBy('o.id')
            .limit(limit)
            .$if(store.dialect === 'postgres', (q) => q.forUpdate().skipLocked()),
        )
        .returningAll()
        .execute();
      return claimed.sort((a, b) => a.id - b.id);
    },

    async run(row) {
      try {
        return await send(row);
      } catch (error) {
        if (!(error instanceof SlackPostError)) throw error;
        switch (error.failure) {
          case 'rate_limited':
            await later(row, error.retryAfterMs ?? 1000);
            return { outcome: 'retry_later' };
          case 'transient':
            if (row.attempts + 1 < MAX_ATTEMPTS) {
              await later(row, lateBackoffMs(row.attempts + 1));
              return { outcome: 'retry_later' };
            }
            break;
          default:
            await deps.onUndeliverable?.(row, error);
        }
        logger.warn(
          { err: error, channel: row.channel, method: row.method },
          'gave up on a message to Slack',
        );
        await finish(row, `dropped: ${error.slackError ?? error.failure}`);
        return { outcome: 'dropped' };
      }
    },
  };
}
