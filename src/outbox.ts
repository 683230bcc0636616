import type { Kysely, Selectable } from 'kysely';
import type { Logger } from './logger.js';
import { claimOutbox, OUTBOX } from './outbox-claim.js';
import type { Tracked } from './pipeline/tracked.js';
import { leaseOf, leaseQueue, writeHeld } from './runner/leases.js';
import type { HeldLease, Task } from './scheduler.js';
import { type PostFailure, SlackPostError } from './slack/calls.js';
import type { SlackPoster } from './slack/poster.js';
import type { Store } from './store/database.js';
import { type InstallationId, ONE_WORKSPACE } from './store/keys.js';
import { periodic } from './store/periodic.js';
import { stepBackGuard } from './store/schedules.js';
import type { Tables } from './store/schema.js';
import type { Message } from './views/blocks.js';

/**
 * Messages the bot sends on its own, delivered from the store: the decision to send a message
 * and the message itself are written in one transaction (`enqueue`), and a job delivers them, one
 * at a time per lane (a watch's messages, a channel's feed: `laneOf`), in order, its slots shared
 * between installations (src/outbox-claim.ts): one workspace's backlog does not hold back
 * another's messages, nor one kind of message another kind.
 *
 * Slack failing or asking to wait (a 5xx, a time-out, a 429, an outage of hours, any code Slack
 * documents as temporary: src/slack/error-codes.ts) only delays a message: it is tried again,
 * backing off up to five minutes, for RETRY_FOR_MS, then dropped as `gave_up`. Before that only
 * a refusal no retry can change drops it (the channel archived, deleted or closed to the bot, the token revoked, the message or
 * its thread deleted, a message Slack finds invalid), logged and counted.
 *
 * A post is marked as attempted before it goes out. If its answer is lost (a time-out, a crash,
 * a 5xx, an `internal_error`), the next attempt first looks for it in Slack, by the id in its
 * metadata, in the minutes around that attempt (allowing for this machine's clock and Slack's to
 * differ by up to CLOCK_TOLERANCE_MS either way), so it is not sent twice. Where Slack will not
 * let the bot look (a public channel it has not joined, a direct message addressed by user id, a
 * missing scope), it posts again: a rare duplicate rather than a lost message. A 429 (or
 * chat.postMessage's `rate_limited`) means Slack took nothing, so after one there is nothing to
 * look for.
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

/** Why a message was dropped, as `slackbot_outbox_dropped_total` counts it. */
export type DropReason =
  /** The channel is archived, deleted, or private and closed to the bot. */
  | 'not_in_channel'
  /** The message to edit, or the thread to reply in, was deleted. */
  | 'message_not_found'
  /** Any other refusal: a revoked token, a message Slack finds invalid. */
  | 'refused'
  /** `mayDeliver` said no: the feed ended, or its channel may no longer receive it. */
  | 'not_allowed'
  /** Slack failed for longer than RETRY_FOR_MS. */
  | 'gave_up';

/** What waits to go out, all instances together: how many messages, and since when the oldest. */
export interface OutboxBacklog {
  pending: number;
  /** When the oldest waiting message was decided (epoch ms); undefined when none waits. */
  oldestAt: number | undefined;
}

/** What waits to go out; of one installation when it is named. */
export async function outboxBacklog(store: Store, installation?: InstallationId): Promise<OutboxBacklog> {
  const row = await store.db
    .selectFrom('outbox')
    .select((eb) => [eb.fn.countAll<number>().as('pending'), eb.fn.min<number>('created_at').as('oldest')])
    .where('done_at', 'is', null)
    .$if(installation !== undefined, (q) =>
      q.where('installation_id', '=', installation as NonNullable<typeof installation>),
    )
    .executeTakeFirstOrThrow();
  return { pending: Number(row.pending), oldestAt: row.oldest === null ? undefined : Number(row.oldest) };
}

/**
 * The lane a message is delivered in, in order, one at a time: what must be ordered shares one,
 * and nothing else does, so one message's trouble holds back only what must follow it. A watch's
 * card edits and thread replies are one lane; a channel's feed messages another; anything else
 * sent to the channel (a notice) a third. A channel shared by two installations is two of each:
 * each delivers with its own token.
 */
function laneOf(
  installation: InstallationId,
  e: Pick<OutgoingEntry, 'channel' | 'watchId' | 'subscriptionId'>,
): string {
  const channel = installation === ONE_WORKSPACE ? e.channel : `${installation}/${e.channel}`;
  if (e.watchId !== undefined) return `${channel}/watch/${e.watchId}`;
  if (e.subscriptionId !== undefined) return `${channel}/feed`;
  return channel;
}

/** Writes messages to send, inside the caller's transaction. */
export async function enqueue(
  trx: Kysely<Tables>,
  entries: readonly OutgoingEntry[],
  now: number,
  /** Whose token sends them: ONE_WORKSPACE for the one workspace. */
  installation: InstallationId,
): Promise<void> {
  if (entries.length === 0) return;
  await trx
    .insertInto('outbox')
    .values(
      entries.map((e) => ({
        installation_id: installation,
        lane: laneOf(installation, e),
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

interface OutboxDeps {
  store: Store;
  /**
   * Who sends an installation's messages ('' is the one workspace): its bot token's poster;
   * undefined while it cannot be served (its token revoked), and its messages wait.
   */
  posterOf: (installation: InstallationId) => Promise<SlackPoster | undefined>;
  logger: Logger;
  clock: () => number;
  /** Called when a message can never be delivered: the channel is closed to the bot, or the message to edit is gone. */
  onUndeliverable?: (row: OutboxRow, error: SlackPostError) => Promise<void>;
  /** Told of each message dropped, for the metrics. */
  onDropped?: (reason: DropReason) => void;
  /**
   * Asked just before a message goes out; `false` drops it unsent. The feed uses it to stop at
   * a channel that was shared with another organisation after it subscribed.
   */
  mayDeliver?: (row: OutboxRow) => Promise<boolean>;
}

/** A message Slack keeps failing is tried again for at least this long after it was decided. */
export const RETRY_FOR_MS = 24 * 3_600_000;
/**
 * The longest wait between two tries: how late a message may go out once Slack answers again.
 * Slack's own Retry-After is kept to it too, so that a next try further ahead than this (and a
 * minute) can only have been written by a clock since stepped back: it is pulled back to now.
 */
export const MAX_BACKOFF_MS = 5 * 60_000;
/** Backoff after a transient failure: 2^attempts seconds, at most MAX_BACKOFF_MS. */
const backoffMs = (attempts: number) => Math.min(MAX_BACKOFF_MS, 1000 * 2 ** attempts);
/**
 * How far this machine's clock may be from Slack's, either way, and a post whose answer was lost
 * still be found: the attempt's time is read on this clock, the post's `ts` on Slack's. Five
 * minutes, as for a signed request's timestamp (docs/slack.md#signing): with a clock further off,
 * Slack's requests would be refused anyway.
 */
export const CLOCK_TOLERANCE_MS = 5 * 60_000;
/**
 * How long after an attempt its post is looked for: the call's own time-out (10 s) and the
 * clock tolerance, with room to spare.
 */
export const ATTEMPT_WINDOW_MS = 10 * 60_000;
/** Failures of a look for an earlier attempt that mean Slack will not say, not that the message is refused. */
const CANNOT_LOOK: ReadonlySet<PostFailure> = new Set(['not_in_channel', 'refused']);
/** Delivered messages are kept this long, then deleted. */
export const KEEP_DONE_MS = 24 * 3_600_000;
/** How often an instance deletes them: at a claim, once a minute at most (claims come several a second). */
export const PRUNE_DONE_EVERY_MS = 60_000;

export function outboxJob(deps: OutboxDeps): Task<OutboxRow, SlackPoster> {
  const { store, logger, clock } = deps;
  const { db } = store;
  // After a clock stepped back an hour, a message backed off for a minute (and every message of
  // its channel behind it) would wait an hour and a minute.
  const steppedBack = stepBackGuard(store, {
    table: 'outbox',
    column: 'next_attempt_at',
    maxAheadMs: MAX_BACKOFF_MS + 60_000,
  });
  /**
   * Updates the row only while the lease it was claimed under still holds it, and lets the lease
   * go unless `keep` (the delivery goes on).
   */
  const fenced = (row: OutboxRow, values: Partial<OutboxRow>, keep = false) =>
    writeHeld(db, OUTBOX, { id: row.id }, leaseOf(row), values, { keep });
  const finish = (row: OutboxRow, result: string) => fenced(row, { done_at: clock(), result });
  /** Tries again in `delayMs` (MAX_BACKOFF_MS at most); an attempt is counted unless nothing was attempted (`counted: false`). */
  const later = (row: OutboxRow, delayMs: number, counted = true) =>
    fenced(row, {
      next_attempt_at: clock() + Math.min(delayMs, MAX_BACKOFF_MS),
      attempts: row.attempts + (counted ? 1 : 0),
    });

  /**
   * Whether the attempt made at `attemptedAt` went out though its answer was lost. If Slack will
   * not say (the bot may not read the conversation, a scope is missing, too many messages to
   * read), the message is sent again rather than lost.
   */
  async function postedBefore(
    poster: SlackPoster,
    row: OutboxRow,
    attemptedAt: number,
    target: { channel: string; threadTs?: string | undefined; messageId: string },
  ) {
    try {
      const found = await poster.find({
        ...target,
        oldest: attemptedAt - CLOCK_TOLERANCE_MS,
        latest: attemptedAt + ATTEMPT_WINDOW_MS,
      });
      return found !== undefined;
    } catch (error) {
      if (!(error instanceof SlackPostError) || !CANNOT_LOOK.has(error.failure)) throw error;
      logger.warn(
        { err: error, channel: row.channel },
        'could not look for an earlier attempt; posting again',
      );
      return false;
    }
  }

  async function send(row: OutboxRow, poster: SlackPoster, lease: HeldLease): Promise<Tracked> {
    if (deps.mayDeliver && !(await deps.mayDeliver(row))) {
      if (await finish(row, 'dropped: not allowed here any more')) deps.onDropped?.('not_allowed');
      return { outcome: 'dropped' };
    }
    const message = JSON.parse(row.message) as Message;
    const messageId = `outbox-${row.id}`;
    const target = { channel: row.channel, threadTs: row.thread_ts ?? undefined, ...message, messageId };
    // Known lost (a renewal found another claim holding it): nothing goes out, whatever the store would say.
    if (lease.lost) return { outcome: 'lease_lost' };
    if (row.ts !== null) {
      await poster.update({ ...target, ts: row.ts });
      await finish(row, 'sent');
      return { outcome: 'sent' };
    }
    if (row.attempted_at !== null && (await postedBefore(poster, row, row.attempted_at, target))) {
      await finish(row, 'found');
      return { outcome: 'found' };
    }
    if (lease.lost || !(await fenced(row, { attempted_at: clock() }, true))) return { outcome: 'lease_lost' };
    try {
      await poster.post(target);
    } catch (error) {
      // Slack takes nothing it answers with a 429: the next attempt has nothing to look for.
      if (error instanceof SlackPostError && error.failure === 'rate_limited')
        await fenced(row, { attempted_at: null }, true);
      throw error;
    }
    await finish(row, 'sent');
    return { outcome: 'sent' };
  }

  /** Drops a message Slack will never take, or has failed for too long: logged and counted. */
  async function drop(row: OutboxRow, error: SlackPostError, reason: DropReason): Promise<Tracked> {
    logger.warn(
      {
        err: error,
        channel: row.channel,
        method: row.method,
        reason,
        attempts: row.attempts + 1,
        waitedMinutes: Math.round((clock() - row.created_at) / 60_000),
      },
      'gave up on a message to Slack',
    );
    if (await finish(row, `dropped: ${error.slackError ?? error.failure}`)) deps.onDropped?.(reason);
    return { outcome: 'dropped' };
  }

  /**
   * After a Slack failure: tried again later, or dropped when no retry can help. Every message
   * has the same bounded life: whatever keeps it waiting (an outage, 429s, a paused feed's
   * refused token), it is dropped as `gave_up` once RETRY_FOR_MS have passed. A bug goes through.
   */
  async function failed(row: OutboxRow, error: unknown): Promise<Tracked> {
    if (!(error instanceof SlackPostError)) throw error;
    const retryable = error.failure === 'rate_limited' || error.failure === 'transient';
    if (retryable && clock() - row.created_at >= RETRY_FOR_MS) return drop(row, error, 'gave_up');
    switch (error.failure) {
      case 'rate_limited':
        // Slack's own wait, else (chat.postMessage's `rate_limited` names none) the backoff.
        await later(row, error.retryAfterMs ?? backoffMs(row.attempts + 1));
        return { outcome: 'retry_later' };
      case 'transient':
        await later(row, backoffMs(row.attempts + 1));
        return { outcome: 'retry_later' };
      default:
        await deps.onUndeliverable?.(row, error);
        return drop(row, error, error.failure);
    }
  }

  /** A message given back unattempted (its workspace cannot be served now): due again at `until`, or dropped once too old. */
  async function giveBack(row: OutboxRow, until: number): Promise<void> {
    if (clock() - row.created_at < RETRY_FOR_MS) return void (await later(row, until - clock(), false));
    logger.warn(
      {
        channel: row.channel,
        method: row.method,
        reason: 'gave_up',
        waitedMinutes: Math.round((clock() - row.created_at) / 60_000),
      },
      'gave up on a message to Slack: its workspace could not be served',
    );
    if (await finish(row, 'dropped: its workspace could not be served')) deps.onDropped?.('gave_up');
  }

  const prune = periodic(PRUNE_DONE_EVERY_MS);
  return {
    name: 'outbox',
    concurrency: 4,
    idleMs: 1000,
    dueAt: (row) => row.next_attempt_at,
    describe: (row) => ({ channel: row.channel }),
    installationOf: (row) => row.installation_id,

    async claim(now, limit, lease, busy) {
      if (prune.due(now))
        await db
          .deleteFrom('outbox')
          .where('done_at', '<', now - KEEP_DONE_MS)
          .execute();
      await steppedBack(now);
      return claimOutbox(store, { owner: lease.owner, now, limit, leaseMs: lease.ms, busy });
    },
    queue: {
      renew: leaseQueue(store, OUTBOX).renew,
      // Nothing was attempted: no attempt is counted. Its life is bounded all the same: a message
      // whose workspace could not be served for RETRY_FOR_MS (a revoked token) is dropped, not
      // posted days late once it is installed again.
      giveBack: (row, _owner, until) => giveBack(row, until),
    },

    serveEach: (installation) => deps.posterOf(installation),

    async run(row, poster, lease) {
      try {
        return await send(row, poster, lease);
      } catch (error) {
        return await failed(row, error);
      }
    },
  };
}
