import type { RespondArguments } from '@slack/bolt';
import type { Visibility } from '../domain/visibility.js';
import type { InvoiceId } from '../payments/index.js';
import type { Message } from '../views/blocks.js';
import type { Outcome } from './outcome.js';

/** What a handler answers a person with, and what the request log records about it. */
export interface Reply {
  message: Message;
  visibility: Visibility;
  outcome: Outcome;
  /** The invoice the request was about, for the log. */
  invoiceId?: InvoiceId | undefined;
}

export const reply = (
  message: Message,
  visibility: Visibility,
  outcome: Outcome = 'ok',
  invoiceId?: InvoiceId,
): Reply => ({ message, visibility, outcome, invoiceId });

/** A reply as Slack takes it in an ack or through a response_url. */
export const toResponse = (r: Reply): RespondArguments => ({
  response_type: r.visibility,
  text: r.message.text,
  blocks: r.message.blocks,
  ...(r.message.attachments ? { attachments: r.message.attachments } : {}),
});
