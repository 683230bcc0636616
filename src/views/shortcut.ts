import type { KnownBlock } from '@slack/types';
import type { Invoice, InvoiceId } from '../payments/index.js';
import { actionButton, actions, context, fallbackText, type Message, section } from './blocks.js';
import { errorTitle } from './errors.js';
import { ACTION_WATCH, expiry, headline, invoiceTitle } from './invoice.js';
import { esc, type Mrkdwn, md } from './mrkdwn.js';

export const ACTION_SHARE = 'share_invoice';
export const SHORTCUT_CHECK_PAYMENT = 'check_payment';

/** One invoice the shortcut looked up: what the service said of it, or why it could not. */
export type Lookup = { id: InvoiceId; invoice: Invoice } | { id: InvoiceId; error: unknown };

/**
 * A button's value that names the invoice and the thread it belongs in: `<id> <thread ts>`. The
 * ephemeral answer has no thread of its own, so the message it was asked about travels along.
 * Read back by `parseButtonValue('placed', …)` (src/listeners/actions/button-value.ts).
 */
export const placedValue = (id: string, threadTs: string) => `${id} ${threadTs}`;

function card(lookup: Lookup, index: number, now: Date, threadTs: string): KnownBlock[] {
  if ('error' in lookup) {
    return [section(md`:warning: \`${esc(lookup.id, 100)}\`: ${errorTitle(lookup.error)}.`)];
  }
  const { invoice } = lookup;
  const value = placedValue(invoice.id, threadTs);
  return [
    section(
      md`*${esc(invoiceTitle(invoice), 150)}*\n${headline(invoice, ' · ')}\nExpiry: ${expiry(invoice, now)}`,
    ),
    // Action ids are unique within a message: one pair of buttons per card, told apart by a suffix.
    actions(
      `invoice_${index}`,
      actionButton('Share in thread', `${ACTION_SHARE}:${index}`, value),
      actionButton('Watch', `${ACTION_WATCH}:${index}`, value),
    ),
  ];
}

/** The shortcut's private answer: a compact card per invoice found, errors shown per card. */
export function paymentCheckMessage(
  lookups: readonly Lookup[],
  more: number,
  opts: { now: Date; threadTs: string },
): Message {
  const found = lookups.filter((l) => 'invoice' in l).length;
  const notes: Mrkdwn[] = [
    md`Only you see this. *Share in thread* posts the full card where everyone in the conversation sees it.`,
  ];
  if (more > 0)
    notes.push(
      md`${more} more ${more === 1 ? 'invoice' : 'invoices'} in the message not shown: I look up 10 at most.`,
    );
  return {
    text: fallbackText(
      md`Found ${lookups.length} ${lookups.length === 1 ? 'invoice' : 'invoices'} in the message; ${found} read`,
    ),
    blocks: [...lookups.flatMap((l, i) => card(l, i, opts.now, opts.threadTs)), context(...notes)],
  };
}

/** Nothing to look up: what the shortcut looks for. */
export function nothingFoundMessage(): Message {
  const body = md`I found no invoice in that message. *Check payment status* looks for invoice ids (like \`3fa85f64-5717-4562-b3fc-2c963f66afa6\`) and payment links in the message's text, blocks and attachments.`;
  return { text: fallbackText(body), blocks: [section(body)] };
}

/** Said to the person who shared a card in a thread. */
export function sharedReply(): Message {
  const body = md`Shared in the thread.`;
  return { text: fallbackText(body), blocks: [section(body)] };
}
