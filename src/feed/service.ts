import { randomUUID } from 'node:crypto';
import type { AccessPolicy, Refusal } from '../access.js';
import type { OutboxRow } from '../outbox.js';
import { UNLEASED } from '../runner/leases.js';
import type { BackgroundDeps } from '../scheduler.js';
import { SlackPostError } from '../slack/calls.js';
import type { InstallationId } from '../store/keys.js';
import { type DigestCadenceOf, digestMovedMessage } from '../views/digest-time.js';
import {
  feedStoppedNotice,
  type SubscriptionListItem,
  subscribedMessage,
  unsubscribedMessage,
} from '../views/feed.js';
import { withSettingsButton } from '../views/feed-settings.js';
import { md } from '../views/mrkdwn.js';
import { channelProblem, undecided } from './channel.js';
import { confirmFeed } from './confirm.js';
import { toStored } from './deltas.js';
import { dailyDigest } from './digest.js';
import { balancePoll } from './poll.js';
import { digestOf, feedQueries, type SubscriptionRow } from './queries.js';
import { DEFAULT_SAVED } from './queries-settings.js';
import { type DigestTime, formatDigestTime, nextDigestAt } from './schedule.js';
import { digestWords, feedTuning, nextDigestOf } from './tuning.js';

export interface FeedDeps extends BackgroundDeps {
  /** The installation whose feeds these are: ONE_WORKSPACE for the one workspace. */
  installation: InstallationId;
  /**
   * Many workspaces: when the account whose key `payments` holds was connected. A reading is
   * kept only while that account is still the installation's, checked in the reading's own
   * transaction (src/feed/poll.ts).
   */
  account?: number;
  pollSeconds: number;
  /** Where the feed may go besides private channels (BALANCE_ALLOWED_CHANNELS). */
  policy: Pick<AccessPolicy, 'allowedChannels'>;
}

export interface SubscribeRequest {
  teamId: string;
  channelId: string;
  userId: string;
  digest: DigestTime;
  /** The person gave a time: a channel that has a feed already gets its digest moved to it. */
  move?: boolean;
}

type SubscribeResult =
  | { kind: 'subscribed'; digest: string }
  | { kind: 'already'; digest: string; cadence: DigestCadenceOf; since: Date }
  /** The channel's feed goes on, its digest moved from `was` to `digest`, sent as its Settings say (`cadence`). */
  | { kind: 'moved'; digest: string; was: string; cadence: DigestCadenceOf }
  | { kind: 'refused'; refusal: Refusal }
  | { kind: 'not_in_channel' };

type UnsubscribeResult = { kind: 'unsubscribed' } | { kind: 'not_subscribed' };

/**
 * An installation's payments feed: the balance is the one place every payment shows, so one
 * reading every BALANCE_POLL_SECONDS serves every channel subscribed in the installation; what
 * moved is posted there, exactly (big.js), once (the reading and its messages are one
 * transaction), and a digest goes out once a day at each channel's local time.
 */
export function createFeed(deps: FeedDeps) {
  const { store, payments, poster, logger, clock, policy } = deps;
  const { db } = store;
  const queries = feedQueries(store, deps.installation);
  const jobDeps = { ...deps, queries, pollMs: deps.pollSeconds * 1000 };
  const poll = balancePoll(jobDeps);
  const digest = dailyDigest(jobDeps);

  /**
   * Why the subscription's channel may no longer receive the feed, if it may not. When Slack does
   * not say (busy, or refusing the bot's token), the outbox is to try the message again later.
   */
  async function problemOf(sub: SubscriptionRow) {
    try {
      return await channelProblem(poster, policy, sub.channel_id);
    } catch (failure) {
      const { error, paused } = undecided(failure);
      if (paused)
        logger.warn(
          { err: failure, channel: sub.channel_id },
          'payments feed paused: Slack refuses the bot’s token; its messages wait',
        );
      throw error;
    }
  }

  /** The channel has a feed: since when, and its digest as its Settings send it (daily, weekly, off). */
  async function already(sub: SubscriptionRow): Promise<SubscribeResult> {
    const { settings } = (await queries.settingsOf(db, [sub.id])).get(sub.id) ?? DEFAULT_SAVED;
    const { digest: every, weekday } = settings;
    return {
      kind: 'already',
      digest: formatDigestTime(digestOf(sub)),
      cadence: { digest: every, weekday },
      since: new Date(sub.created_at),
    };
  }

  /**
   * The channel's feed goes on with its digest at another time, from the next one on; the channel
   * is told who moved it. Undefined when the feed ended meanwhile.
   */
  async function move(sub: SubscriptionRow, req: SubscribeRequest): Promise<SubscribeResult | undefined> {
    const was = formatDigestTime(digestOf(sub));
    const digest = formatDigestTime(req.digest);
    if (digest === was) return await already(sub);
    const now = clock();
    const cadence = await store.transaction(async (trx) => {
      const { settings } = (await queries.settingsOf(trx, [sub.id])).get(sub.id) ?? DEFAULT_SAVED;
      if (!(await queries.moveDigest(trx, sub.id, req.digest, nextDigestOf(req.digest, settings, now))))
        return undefined;
      const { digest: every, weekday } = settings;
      const notice = digestMovedMessage({
        userId: req.userId,
        digest,
        was,
        cadence: { digest: every, weekday },
      });
      await queries.tell(trx, [{ channel: sub.channel_id, message: notice }], now);
      return { digest: every, weekday };
    });
    if (!cadence) return undefined;
    deps.wakeOutbox?.();
    return { kind: 'moved', digest, was, cadence };
  }

  return {
    /**
     * Who may turn a feed on, the caller has asked the access rules; the channel, this asks. A
     * channel with a feed keeps it, its digest moved when the request gives a time.
     */
    async subscribe(req: SubscribeRequest): Promise<SubscribeResult> {
      const existing = await queries.activeInChannel(db, req.channelId);
      if (existing && !req.move) return await already(existing);
      const moved = existing && (await move(existing, req));
      if (moved) return moved;
      const problem = await channelProblem(poster, policy, req.channelId);
      if (problem === 'not_in_channel') return { kind: 'not_in_channel' };
      if (problem) return { kind: 'refused', refusal: problem };

      const entries = await payments.getBalance();
      const now = clock();
      const digest = formatDigestTime(req.digest);
      const balances = toStored(entries);
      const id = randomUUID();
      // The feed is taken before its first message goes: of two people turning it on in one
      // channel at once, one does and the other is told it is on (one active feed per channel).
      try {
        await store.transaction(async (trx) => {
          // The first feed starts from this reading; later ones join the running feed, whose last
          // reading stays the baseline so no change is skipped for the channels already subscribed.
          if ((await queries.active(trx)).length === 0) await queries.insertReading(trx, now, balances);
          await queries.insert(trx, {
            id,
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
            ...UNLEASED,
            key_notice_at: null,
          });
          await queries.startPoll(trx, now + jobDeps.pollMs, now);
        });
      } catch (error) {
        const first = await queries.activeInChannel(db, req.channelId);
        if (first) return await already(first);
        throw error;
      }
      const confirmation = withSettingsButton(
        subscribedMessage({
          channelId: req.channelId,
          userId: req.userId,
          digest,
          balances,
          readAt: new Date(now),
          pollSeconds: deps.pollSeconds,
        }),
        req.channelId,
      );
      try {
        await confirmFeed({ ...deps, queries }, { id, channel_id: req.channelId }, confirmation);
      } catch (error) {
        // Slack refused the message, so nothing was said in the channel: the feed did not start.
        await store.transaction((trx) => queries.end(trx, id, 'not_started', clock()));
        if (error instanceof SlackPostError && error.failure === 'not_in_channel')
          return { kind: 'not_in_channel' };
        throw error;
      }
      return { kind: 'subscribed', digest };
    },

    /** Who may turn a feed off, the caller has asked the access rules. */
    async unsubscribe(req: { channelId: string; userId: string }): Promise<UnsubscribeResult> {
      const now = clock();
      const ended = await store.transaction(async (trx) => {
        const sub = await queries.activeInChannel(trx, req.channelId);
        if (!sub || !(await queries.end(trx, sub.id, 'unsubscribed', now))) return false;
        await queries.tell(trx, [{ channel: sub.channel_id, message: unsubscribedMessage(req.userId) }], now);
        return true;
      });
      if (ended) deps.wakeOutbox?.();
      return ended ? { kind: 'unsubscribed' } : { kind: 'not_subscribed' };
    },

    /** The workspace's feeds, oldest first. */
    async list(teamId: string): Promise<SubscriptionListItem[]> {
      const subs = await queries.listInTeam(teamId);
      const saved = await queries.settingsOf(
        db,
        subs.map((s) => s.id),
      );
      return subs.map((s) => ({
        channelId: s.channel_id,
        subscriberId: s.subscriber_id,
        digest: digestWords(digestOf(s), (saved.get(s.id) ?? DEFAULT_SAVED).settings),
        since: new Date(s.created_at),
      }));
    },

    /**
     * Just before a feed message goes out: is the channel still one the feed may go to? A
     * channel shared with another organisation since, a DM, or one the bot was removed from
     * (deleted, archived) ends the subscription, and the subscriber is told why, privately.
     * Slack busy or refusing the bot's token ends nothing: the message is tried again (./channel.ts).
     */
    async mayDeliver(row: OutboxRow): Promise<boolean> {
      if (!row.subscription_id) return true;
      const sub = await queries.byId(row.subscription_id);
      if (sub?.state !== 'active') return false;
      const problem = await problemOf(sub);
      if (!problem) return true;
      const now = clock();
      const why =
        problem === 'shared_channel'
          ? md`the channel is now shared with another organisation`
          : problem === 'not_in_channel'
            ? md`the bot can no longer see the channel`
            : md`the channel is no longer private`;
      await store.transaction(async (trx) => {
        if (!(await queries.end(trx, sub.id, problem, now))) return;
        await queries.tell(
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

    /**
     * The readings in force at `times` (./queries-history.ts): what the balance was a day ago for
     * `/balance`, and over the week for the App Home's chart. A reading is kept only when the
     * poll saw the balance move, so one is known to be in force at a time only when a poll read
     * the balance after it (`trustedUpTo`): while no feed polls, none is.
     */
    async readingsAt(times: readonly number[]) {
      const [inForce, succeededAt] = await Promise.all([
        queries.readingsAt(db, times),
        queries.pollSucceededAt(db),
      ]);
      const now = clock();
      return inForce.map((reading, i) =>
        trustedUpTo(succeededAt, times[i] ?? now, now, jobDeps.pollMs) ? reading : undefined,
      );
    },

    /** The installation's balance poll (./poll.ts), once `feedJobs` claimed it. */
    poll,

    /** A subscription's daily digest (./digest.ts), once `feedJobs` claimed it. */
    digest,

    /** Each feed's Settings modal: what it shows, and saving it (./tuning.ts). */
    ...feedTuning({ ...deps, queries }),
  };
}

export type Feed = ReturnType<typeof createFeed>;

/** Polls that may fail in a row before the latest reading is no longer taken as the balance now. */
const LIVE_POLLS = 3;

/**
 * Whether the reading in force at `at` is known to be the balance then: a poll succeeded at or
 * after `at`, or (for a time about now) within the last few poll intervals.
 */
function trustedUpTo(succeededAt: number | null | undefined, at: number, now: number, pollMs: number) {
  return succeededAt != null && succeededAt >= Math.min(at, now - LIVE_POLLS * pollMs);
}
