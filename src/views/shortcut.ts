import type { KnownBlock } from '@slack/types';
import { ACTION_SHARE, ACTION_WATCH } from '../domain/actions.js';
import { awaitsPayment } from '../domain/invoice.js';
import type { Invoice, InvoiceId } from '../payments/index.js';
import { actionButton, actions, context, fallbackText, type Message, section } from './blocks.js';
import { errorTitle } from './errors.js';
import { asSent, compactCard, invoiceTitle, statesOf } from './invoice.js';
import { channelMention, esc, link, type Mrkdwn, md } from './mrkdwn.js';

/**
 * One invoice the shortcut looked up: what the service said of it (and whether Watch can start a
 * watch of it, `Watches.watchable`; by default while it awaits payment), or why it could not.
 */
export type Lookup =
  | { id: InvoiceId; invoice: Invoice; watchable?: boolean }
  | { id: InvoiceId; error: unknown };

/**
 * A button's value that names the invoice and the thread it belongs in: `<id> <thread ts>`. The
 * ephemeral answer has no thread of its own, so the message it was asked about travels along.
 * After a Share in thread that posted nothing, the card offered again adds which try it is.
 * Read back by `parseButtonValue('placed', …)` (src/listeners/actions/button-value.ts).
 */
export const placedValue = (id: string, threadTs: string, attempt = 0) =>
  attempt > 0 ? `${id} ${threadTs} ${attempt}` : `${id} ${threadTs}`;

function card(lookup: Lookup, index: number, now: Date, threadTs: string, attempt = 0): KnownBlock[] {
  if ('error' in lookup) {
    return [section(md`:warning: \`${esc(lookup.id, 100)}\`: ${errorTitle(lookup.error)}.`)];
  }
  const { invoice, watchable = awaitsPayment(invoice) } = lookup;
  const value = placedValue(invoice.id, threadTs, attempt);
  const sent = asSent(statesOf(invoice));
  const share = actionButton('Share in thread', `${ACTION_SHARE}:${index}`, value);
  return [
    section(compactCard(invoice, now)),
    // Action ids are unique within a message: one pair of buttons per card, told apart by a suffix.
    watchable
      ? actions(`invoice_${index}`, share, actionButton('Watch', `${ACTION_WATCH}:${index}`, value))
      : actions(`invoice_${index}`, share),
    // The exact state values behind the labels, as the unfurl and the full card give them.
    ...(sent ? [context(md`Invoice \`${esc(invoice.id, 100)}\` · ${sent}`)] : []),
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

/**
 * What the shortcut's private answer becomes once Share in thread posted the card: what happened,
 * with a link to the card when there is one. No buttons are left to click twice.
 */
export function sharedMessage(invoice: Pick<Invoice, 'title'>, permalink: string | undefined): Message {
  const where = permalink === undefined ? md`in the thread` : link(permalink, 'in the thread');
  const body = md`:white_check_mark: Shared *${esc(invoiceTitle(invoice), 200)}* ${where}, for everyone in the conversation to see.`;
  return { text: fallbackText(body), blocks: [section(body)] };
}

/** A second click of Share in thread on one answer: nothing more is posted. */
export function alreadySharedMessage(): Message {
  const body = md`*Share in thread* was clicked already on that answer, so I posted nothing more: its result replaces the answer.`;
  return { text: fallbackText(body), blocks: [section(body)] };
}

/** Slack did not answer the post of a shared card: it may be in the thread, or not. */
export function shareUnconfirmedMessage(invoice: Pick<Invoice, 'title'>): Message {
  const body = md`:warning: Slack did not answer in time when I shared *${esc(invoiceTitle(invoice), 200)}* in the thread. If the card is not there within a minute, use *Check payment status* on the message again.`;
  return { text: fallbackText(body), blocks: [section(body)] };
}

/** Share in thread where the bot cannot post: nothing was posted. */
export function shareInviteFirst(channelId: string): Message {
  const body = md`:warning: I cannot post in ${channelMention(channelId)}, so nothing was shared. Invite me first with \`/invite @Crypto Payments\`, then click *Share in thread* again.`;
  return { text: fallbackText(body), blocks: [section(body)] };
}

/**
 * What the private answer becomes when Share in thread posted nothing: why, and the invoice's
 * card again, whose buttons are a new try (`attempt`), so that one click of them shares once more.
 */
export function shareAgainMessage(
  problem: Message,
  lookup: Lookup,
  opts: { now: Date; threadTs: string; attempt: number },
): Message {
  return {
    text: problem.text,
    blocks: [...problem.blocks, ...card(lookup, 0, opts.now, opts.threadTs, opts.attempt)],
  };
}
