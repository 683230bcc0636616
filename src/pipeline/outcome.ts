import type { Refusal } from '../access.js';
import type { PaymentErrorCode } from '../payments/index.js';

/** How the answer travelled: in the ack, to the response_url, as a republished view (the App Home), or not at all. */
export type Delivery = 'ack' | 'response_url' | 'view' | 'failed';

/**
 * What the request log records for every piece of work, from one closed set (it is also a
 * metric label): success, the person's own input (`help`, `usage`, `invalid_input`), each way the
 * payment service can fail, each access refusal, what an event or a background job came to, and
 * a bug.
 */
export type Outcome =
  | 'ok'
  | 'help'
  | 'usage'
  | 'invalid_input'
  /** Many workspaces: the installation has not connected its payment account yet. */
  | 'not_connected'
  /** A click whose button value the bot did not write (a stale card, a forged click). */
  | 'stale_button'
  | PaymentErrorCode
  | Refusal
  | 'internal_error'
  /** A post the person asked for (a live card, a shared card) that Slack did not take just now. */
  | 'slack_busy'
  // events
  | 'no_payment_link'
  | 'no_invoice'
  | 'unfurl_failed'
  /** entity.presentDetails did not take the side panel. */
  | 'panel_failed'
  | 'duplicate'
  // watches
  | 'already_watched'
  | 'watch_limit'
  | 'invoice_expired'
  /** The invoice no longer awaits payment: nothing left to watch. */
  | 'invoice_final'
  | 'not_in_channel'
  | 'not_watched'
  | 'unchanged'
  | 'changed'
  | 'ended'
  | 'paused'
  | 'lease_lost'
  /** A reading or check made with a key that was replaced or disconnected meanwhile: kept nowhere. */
  | 'account_changed'
  // the payments feed
  | 'already_subscribed'
  | 'not_subscribed'
  // the outbox
  | 'sent'
  | 'found'
  | 'retry_later'
  | 'dropped';
