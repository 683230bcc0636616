import { randomUUID } from 'node:crypto';
import { webApi } from '@slack/bolt';
import { awaitsPayment } from '../domain/invoice.js';
import type { EndReason } from '../domain/watch.js';
import { ATTEMPT_WINDOW_MS, CLOCK_TOLERANCE_MS } from '../outbox.js';
import type { Invoice, InvoiceId } from '../payments/index.js';
import { type PostFailure, SlackPostError, slackWasBusy } from '../slack/calls.js';
import { noteDroppedEntity } from '../slack/entity-warning.js';
import { firstSight } from '../store/events.js';
import { seenKey } from '../store/keys.js';
import { liveInvoiceCard } from '../views/invoice.js';
import { liveCardEntity } from '../views/invoice-entity.js';
import type { Mrkdwn } from '../views/mrkdwn.js';
import { nextPollAt } from './cadence.js';
import { liveWatch, type WatchContext } from './context.js';
import type { WatchRow } from './queries.js';
import { toSnapshot } from './snapshot.js';
import { recordState } from './states-seen.js';

/**
 * Starting a watch. The watch is stored, pending, before its card is posted, and becomes active
 * once the card is known to be in Slack: Slack answered with it, or, when its answer was lost
 * (a time-out, a 5xx), the card was found by the id in its metadata. A watch is forgotten only
 * when its card is known not to be there; until then it holds its channel's one watch of the
 * invoice, so a second try does not post a second card. A watch left pending by a start that
 * never finished (the process killed mid-post) is settled the same way by the next check of
 * its invoice, or the next start of it in its channel: no card claims a watch that is not stored.
 */

export interface StartRequest {
  teamId: string;
  channelId: string;
  userId: string;
  invoiceId: InvoiceId;
  /** Post the live card as a reply in this thread (the card whose Watch button was clicked). */
  threadTs?: string | undefined;
}

type StartResult =
  | { kind: 'started'; invoice: Invoice; inThread: boolean }
  | { kind: 'already'; invoice: Invoice; since: Date }
  /** Another start of it is posting its card, or Slack has not confirmed that card yet. */
  | { kind: 'posting'; invoice: Invoice; since: Date }
  | { kind: 'limit'; limit: number }
  | { kind: 'expired'; invoice: Invoice }
  /** The invoice no longer awaits payment: nothing more is expected to change. */
  | { kind: 'final'; invoice: Invoice }
  | { kind: 'not_in_channel' }
  /** Slack did not answer the post and its card is not found (yet): it may still appear. */
  | { kind: 'unconfirmed'; invoice: Invoice }
  /** It ended while its card was posted (its payment account was disconnected): the card says why. */
  | { kind: 'ended'; invoice: Invoice; why: Mrkdwn };

/** What became of a pending watch whose card is in Slack. */
type Confirmed = { kind: 'active' } | { kind: 'ended'; reason: EndReason } | { kind: 'dropped' };

/**
 * How long a start takes at most: its post's deadline (10 s) and a look for the card when the
 * answer was lost, with room to spare. A watch pending longer was left by a start that did not
 * finish, and is settled by whoever meets it.
 */
export const PENDING_SETTLE_MS = 30_000;

/** The id a watch's card carries in its metadata, to be found again when Slack's answer was lost. */
const cardMessageId = (watchId: string) => `watch-${watchId}`;

/** Post failures after which Slack has taken nothing: the card is known not to be there. */
const NOT_POSTED: ReadonlySet<PostFailure> = new Set(['not_in_channel', 'rate_limited', 'refused']);

/**
 * Whether Slack answered a failed post (a 5xx, an error such as `internal_error`): its part is
 * then over, and a look that does not find the card knows it is not there. Without an answer
 * (a time-out, a dropped connection) the post may still be under way in Slack.
 */
const slackAnswered = (error: SlackPostError) =>
  error.cause instanceof webApi.WebAPIHTTPError || error.cause instanceof webApi.WebAPIPlatformError;

export function watchStarts(ctx: WatchContext) {
  const { deps, queries } = ctx;
  const { store, payments, clock, settings } = deps;
  const cards = pendingCards(ctx);
  const { settleStale, watchOf } = settling(ctx, cards);
  const { post } = posting(ctx, cards);

  const existing = (w: WatchRow, invoice: Invoice): StartResult => ({
    kind: w.state === 'active' ? 'already' : 'posting',
    invoice,
    since: new Date(w.started_at),
  });

  async function start(req: StartRequest): Promise<StartResult> {
    const current = await watchOf(req);
    if (current) return existing(current, await payments.getInvoice(req.invoiceId));
    if ((await queries.countActive(req.channelId)) >= settings.limitPerChannel) {
      return { kind: 'limit', limit: settings.limitPerChannel };
    }
    const invoice = await payments.getInvoice(req.invoiceId);
    const now = clock();
    // A final invoice, or one past its expiry and the grace: a watch would end at its first check.
    if (!ctx.mayChange(invoice, now)) return { kind: awaitsPayment(invoice) ? 'expired' : 'final', invoice };
    const watch: Omit<WatchRow, 'installation_id'> = {
      id: randomUUID(),
      team_id: req.teamId,
      channel_id: req.channelId,
      invoice_id: req.invoiceId,
      watcher_id: req.userId,
      card_ts: '',
      thread_ts: req.threadTs ?? '',
      state: 'pending',
      started_at: now,
      ends_at: now + settings.maxDays * 86_400_000,
      ended_at: null,
      end_reason: null,
    };
    // The reading just made is the first check: the next one follows the cadence.
    const timeout = invoice.timeout.getTime();
    const nextAt = nextPollAt({ now, since: now, timeout, pollSeconds: settings.pollSeconds, failures: 0 });
    try {
      await store.transaction(async (trx) => {
        await queries.insert(trx, watch, JSON.stringify(toSnapshot(invoice)), nextAt);
        await recordState(trx, deps.installation, invoice, now);
      });
    } catch (error) {
      // Someone started the same watch a moment earlier: theirs stands, and this one posts nothing.
      const raced = await queries.current(req.channelId, req.invoiceId);
      if (!raced) throw error;
      return existing(raced, invoice);
    }
    return post({ ...watch, installation_id: deps.installation }, invoice, req.threadTs);
  }

  return { start, settleStale };
}

/** A pending watch's card: looked for in Slack, confirmed there, or its watch dropped when it is not there. */
function pendingCards(ctx: WatchContext) {
  const { deps, queries } = ctx;
  const { store, poster, logger, clock } = deps;

  /** Looks for a pending watch's card by its metadata: its ts, or undefined when it is not in Slack. */
  const lookFor = (w: WatchRow) =>
    poster.find({
      channel: w.channel_id,
      threadTs: w.thread_ts || undefined,
      oldest: w.started_at - CLOCK_TOLERANCE_MS,
      latest: w.started_at + ATTEMPT_WINDOW_MS,
      messageId: cardMessageId(w.id),
    });

  /**
   * A watch that ended while its card was posted (`endAll`): the card is placed on it and told
   * why, its thread too, as for any end. False when there is nothing to tell it with (its
   * invoice no longer polled and not at hand) or it was placed already.
   */
  async function placeEnded(w: WatchRow, cardTs: string, reason: EndReason, known?: Invoice) {
    const now = clock();
    const card = { card_ts: cardTs, thread_ts: w.thread_ts || cardTs };
    const placed = await store.transaction(async (trx) => {
      const invoice = known ?? (await ctx.lastSeen(trx, w.invoice_id));
      if (!invoice || !(await queries.placeEndedCard(trx, w.id, card))) return false;
      await ctx.send(trx, ctx.endingMessages({ ...w, ...card }, invoice, reason, now), now);
      return true;
    });
    if (placed) deps.wakeOutbox?.();
    return placed;
  }

  /**
   * The card is in Slack: its watch becomes active. With `refresh` (a card found long after it
   * was posted) the card is edited to the invoice as last read (`invoice`, when the start has it
   * at hand). A watch that ended meanwhile has its end told on the card. One forgotten meanwhile
   * has its card deleted, as it would claim a watch that is not stored.
   */
  async function confirm(
    w: WatchRow,
    cardTs: string,
    refresh: boolean,
    invoice?: Invoice,
  ): Promise<Confirmed> {
    const now = clock();
    const activated = await store.transaction(async (trx) => {
      const card = { card_ts: cardTs, thread_ts: w.thread_ts || cardTs };
      if (!(await queries.activate(trx, w.id, card))) return false;
      const seen = refresh ? await ctx.lastSeen(trx, w.invoice_id) : undefined;
      if (seen) {
        const message = liveInvoiceCard(seen, { now: new Date(now), watch: liveWatch(w) });
        await ctx.send(trx, [{ channel: w.channel_id, ts: cardTs, message, watchId: w.id }], now);
      }
      return true;
    });
    if (activated) {
      if (refresh) deps.wakeOutbox?.();
      return { kind: 'active' };
    }
    const current = await queries.byId(w.id);
    // Someone else settled it: with this card, or as not posted.
    if (current?.card_ts === cardTs) return { kind: 'active' };
    // The store keeps an EndReason there.
    const reason = current?.state === 'ended' ? (current.end_reason as EndReason | null) : null;
    if (reason && (await placeEnded(w, cardTs, reason, invoice))) return { kind: 'ended', reason };
    await poster.remove({ channel: w.channel_id, ts: cardTs }).catch((error: unknown) => {
      logger.warn(
        { err: error, watch: w.id, channel: w.channel_id },
        'could not delete the card of a dropped watch',
      );
    });
    return { kind: 'dropped' };
  }

  /**
   * Forgets a pending watch whose card is not in Slack, and its invoice if nothing else watches
   * it: true when the invoice was forgotten.
   */
  const drop = (w: WatchRow) =>
    store.transaction(
      async (trx) => (await queries.drop(trx, w.id)) && queries.forgetIfUnwatched(trx, w.invoice_id),
    );

  return { lookFor, confirm, drop };
}

type PendingCards = ReturnType<typeof pendingCards>;

/** Settling watches left pending by starts that did not finish: at a check of their invoice, or at the next start. */
function settling(ctx: WatchContext, { lookFor, confirm, drop }: PendingCards) {
  const { queries } = ctx;
  const { logger, clock } = ctx.deps;

  /**
   * Settles a watch left pending by a start that did not finish: active when its card is found,
   * forgotten when it is not. Left pending while Slack fails (tried again later); forgotten with
   * a warning where Slack will not let the bot look (a public channel it has not joined). True
   * when its invoice was forgotten with it.
   */
  async function settlePending(w: WatchRow): Promise<boolean> {
    let cardTs: string | undefined;
    try {
      cardTs = await lookFor(w);
    } catch (error) {
      if (slackWasBusy(error)) return false;
      if (!(error instanceof SlackPostError)) throw error;
      logger.warn(
        { err: error, watch: w.id, channel: w.channel_id },
        'could not look for the card of a watch whose start did not finish: the watch is dropped',
      );
    }
    logger.info({ watch: w.id, found: cardTs !== undefined }, 'settled a watch whose start did not finish');
    if (cardTs === undefined) return drop(w);
    await confirm(w, cardTs, true);
    return false;
  }

  /**
   * Settles the invoice's watches pending longer than a start takes: a check does this before
   * it reads. True when that left the invoice watched by nobody: it is no longer polled.
   */
  async function settleStale(invoiceId: string): Promise<boolean> {
    let forgotten = false;
    for (const w of await queries.pendingSince(invoiceId, clock() - PENDING_SETTLE_MS))
      forgotten = (await settlePending(w)) || forgotten;
    return forgotten;
  }

  /** The channel's watch of the invoice, once one left pending by an unfinished start is settled. */
  async function watchOf(req: StartRequest): Promise<WatchRow | undefined> {
    const w = await queries.current(req.channelId, req.invoiceId);
    if (w?.state !== 'pending' || clock() - w.started_at < PENDING_SETTLE_MS) return w;
    await settlePending(w);
    return queries.current(req.channelId, req.invoiceId);
  }

  return { settleStale, watchOf };
}

/** Posting a new watch's card. */
function posting(ctx: WatchContext, { lookFor, confirm, drop }: PendingCards) {
  const { poster, logger, store, clock } = ctx.deps;

  /**
   * Posts a pending watch's card and makes the watch active. "Nothing was posted" (the error
   * thrown) only when the card is known not to be in Slack; after a failure that leaves it
   * unknown, the card is looked for, and if that cannot tell, the watch stays pending for the
   * next check to settle.
   */
  async function post(w: WatchRow, invoice: Invoice, threadTs: string | undefined): Promise<StartResult> {
    const card = liveInvoiceCard(invoice, { now: new Date(w.started_at), watch: liveWatch(w) });
    let cardTs: string | undefined;
    try {
      cardTs = await poster.post({
        channel: w.channel_id,
        threadTs,
        ...card,
        messageId: cardMessageId(w.id),
        entities: [liveCardEntity(invoice, { installation: w.installation_id })],
        onAnswer: (answer) =>
          noteDroppedEntity(
            (key) => firstSight(store, seenKey(w.installation_id, key), clock()),
            logger,
            'chat.postMessage',
            answer,
          ),
      });
    } catch (error) {
      if (!(error instanceof SlackPostError)) throw error;
      if (NOT_POSTED.has(error.failure)) {
        await drop(w);
        if (error.failure === 'not_in_channel') return { kind: 'not_in_channel' };
        throw error;
      }
      const found = await lookFor(w).then(
        (ts) => ({ ts }),
        (failure: unknown) => {
          if (failure instanceof SlackPostError) return undefined;
          throw failure;
        },
      );
      cardTs = found?.ts;
      if (cardTs === undefined && found && slackAnswered(error)) {
        await drop(w);
        throw error;
      }
      if (cardTs === undefined) {
        logger.warn({ err: error, watch: w.id, channel: w.channel_id }, 'a live card was not confirmed');
        return { kind: 'unconfirmed', invoice };
      }
    }
    const confirmed = await confirm(w, cardTs, false, invoice);
    if (confirmed.kind === 'dropped') throw new Error('the watch was dropped while its card was posted');
    if (confirmed.kind === 'ended') return { kind: 'ended', invoice, why: ctx.why(confirmed.reason) };
    return { kind: 'started', invoice, inThread: threadTs !== undefined };
  }

  return { post };
}
