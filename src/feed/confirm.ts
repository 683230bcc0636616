import { ATTEMPT_WINDOW_MS, CLOCK_TOLERANCE_MS } from '../outbox.js';
import type { BackgroundDeps } from '../scheduler.js';
import { SlackPostError, slackWasBusy } from '../slack/calls.js';
import type { Message } from '../views/blocks.js';
import type { FeedQueries, SubscriptionRow } from './queries.js';

type ConfirmDeps = Pick<BackgroundDeps, 'store' | 'poster' | 'logger' | 'clock' | 'wakeOutbox'> & {
  queries: FeedQueries;
};

/**
 * Posts a new feed's first message ("the feed is on") in its channel. Only a definite refusal
 * (the bot is not in the channel, Slack finds the message invalid) is thrown, and the feed does
 * not start. A time-out may come after Slack took the message: it is looked for by its id, and
 * when it is not found, or Slack will not let the bot look, the outbox delivers it, so the channel
 * is told the feed is on and the feed goes on (a rare duplicate rather than a silent feed).
 * While an earlier message to the channel still waits in the outbox (the feed was turned off a
 * moment ago and Slack is slow to take it), the first message queues behind it, so the channel
 * never reads "on" before the "off" that came first.
 */
export async function confirmFeed(
  deps: ConfirmDeps,
  sub: Pick<SubscriptionRow, 'id' | 'channel_id'>,
  message: Message,
): Promise<void> {
  const { poster, clock } = deps;
  const messageId = `feed-${sub.id}`;
  const attemptedAt = clock();
  if (await deps.queries.waitingIn(sub.channel_id)) return queue(deps, sub, message);
  try {
    await poster.post({ channel: sub.channel_id, ...message, messageId });
  } catch (error) {
    if (!slackWasBusy(error)) throw error;
    // A 429 means Slack took nothing: there is nothing to look for.
    if (error.failure === 'transient' && (await postedAfter(deps, sub.channel_id, messageId, attemptedAt)))
      return;
    deps.logger.warn(
      { err: error, channel: sub.channel_id },
      'the payments feed’s first message did not go out; the outbox delivers it',
    );
    await queue(deps, sub, message);
  }
}

/** Hands the first message to the outbox, which delivers it after what the channel was sent before. */
async function queue(deps: ConfirmDeps, sub: Pick<SubscriptionRow, 'id' | 'channel_id'>, message: Message) {
  await deps.store.transaction((trx) => deps.queries.enqueueTo(trx, [sub], message, deps.clock()));
  deps.wakeOutbox?.();
}

/** Whether the post tried at `attemptedAt` is in the channel; false when Slack will not say. */
async function postedAfter(
  deps: ConfirmDeps,
  channel: string,
  messageId: string,
  attemptedAt: number,
): Promise<boolean> {
  try {
    const found = await deps.poster.find({
      channel,
      oldest: attemptedAt - CLOCK_TOLERANCE_MS,
      latest: attemptedAt + ATTEMPT_WINDOW_MS,
      messageId,
    });
    return found !== undefined;
  } catch (error) {
    if (!(error instanceof SlackPostError)) throw error;
    deps.logger.warn({ err: error, channel }, 'could not look for the payments feed’s first message');
    return false;
  }
}
