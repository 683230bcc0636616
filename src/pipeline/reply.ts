import type { RespondArguments } from '@slack/bolt';
import type { EntityMetadata } from '@slack/types';
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
  /** Work Objects the message carries (`metadata.entities`, src/views/invoice-entity.ts). */
  entities?: EntityMetadata[] | undefined;
  /**
   * Work that follows the reply once it is out, which nobody waits for (a lookup's sighting, for
   * the feed): the reply is not held by a write and its commit. It logs its own failures.
   */
  afterwards?: (() => Promise<void>) | undefined;
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
  ...(r.entities ? { metadata: { entities: r.entities } } : {}),
});
