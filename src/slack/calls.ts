/**
 * The bot's vocabulary of Slack calls: which it makes, and the ways one fails that the bot acts
 * on. Plain values and an error class, free of any transport, so views can explain them.
 */

/** The Web API methods and posts the bot makes, as a metric label. */
export type SlackMethod =
  | 'chat.postMessage'
  | 'chat.update'
  | 'chat.delete'
  | 'chat.unfurl'
  | 'entity.presentDetails'
  | 'conversations.info'
  | 'conversations.history'
  | 'conversations.replies'
  | 'views.publish'
  | 'views.open'
  | 'users.info'
  | 'functions.completeSuccess'
  | 'functions.completeError'
  | 'response_url';

/**
 * Why Slack did not take a message, in the few ways the bot acts on (docs/slack.md#posting); how
 * each of Slack's error codes maps onto them, per method: src/slack/error-codes.ts.
 */
export type PostFailure =
  /** A private channel or DM the bot is not in: ask a person to /invite it. */
  | 'not_in_channel'
  /** The message to edit is gone (deleted). */
  | 'message_not_found'
  /** Slack asks to wait (for `retryAfterMs` when it says how long), and took nothing. */
  | 'rate_limited'
  /** No answer, a 5xx, a time-out, a code Slack documents as temporary (or not at all): worth another try. */
  | 'transient'
  /** Anything else Slack refused (`slackError` says what). */
  | 'refused';

export class SlackPostError extends Error {
  override readonly name = 'SlackPostError';
  constructor(
    readonly failure: PostFailure,
    readonly slackError: string | undefined,
    readonly retryAfterMs?: number,
    options?: { cause?: unknown },
  ) {
    super(`Slack did not take the message: ${slackError ?? failure}`, options);
  }
}

/** Slack asked to slow down or did not answer: nothing was posted, and a later try may work. */
export const slackWasBusy = (error: unknown): error is SlackPostError =>
  error instanceof SlackPostError && (error.failure === 'rate_limited' || error.failure === 'transient');
