import type { KnownBlock } from '@slack/types';
import { Amount } from '../payments/index.js';
import { type Addition, appendWithin, context, type Message, wholeSection } from './blocks.js';
import { groupDigits } from './figures.js';
import { esc, escapeText, httpUrl, join, link, type Mrkdwn, md, slackDate } from './mrkdwn.js';

/**
 * Issue 40, point 5: the invoices this workspace watched or looked up in a channel that were
 * paid in a feed post's or a digest's period, named beside the balance's movements. Said as what
 * they are, never as where a movement came from: the balance sums every payment, these are only
 * the invoices someone here asked the bot about.
 */

/** An invoice the bot saw paid (src/feed/paid-invoices.ts reads them). */
export interface PaidInvoiceItem {
  invoiceId: string;
  title: string;
  /** The exact digits the service sent. */
  amount: string;
  currency: string;
  /** The payment page as the service sent it; linked only when the invoice card would link it. */
  link: string;
  /** 'watched': a watch's check saw it turn paid; 'seen': a lookup saw it paid, the first here to. */
  how: 'watched' | 'seen';
  /** When the bot saw it. */
  paidAt: Date;
}

/** The first of them, in the order the bot saw them, and how many there are in all. */
export interface PaidInvoices {
  shown: readonly PaidInvoiceItem[];
  total: number;
}

/** At most this many are named in one message; the rest are counted. */
export const MAX_PAID_LISTED = 10;

export const PAID_HEADING = 'Invoices watched or looked up here that were paid';

const MAX_TITLE = 80;
const MAX_ID = 40;
/** Links longer than this are left out of the list (the invoice card still has its button). */
const MAX_LINK = 500;

function line(p: PaidInvoiceItem): Mrkdwn {
  const name =
    p.title.trim() === '' ? md`Invoice \`${esc(p.invoiceId, 100)}\`` : md`*${esc(p.title, MAX_TITLE)}*`;
  const parsed = Amount.parse(p.amount);
  const amount = parsed ? groupDigits(parsed.toString()) : p.amount;
  const when = md`${p.how === 'watched' ? 'paid' : 'seen paid'} ${slackDate(p.paidAt)}`;
  const href = httpUrl(p.link);
  const page = href !== undefined && href.length <= MAX_LINK ? md` · ${link(href, 'payment page')}` : md``;
  return md`• ${name} — ${amount} ${esc(p.currency, MAX_ID)} · ${when}${page}`;
}

/** The text's words for them: their count, and the named ones' exact amounts when `named` is given. */
function words(paid: PaidInvoices, named?: readonly PaidInvoiceItem[]): string {
  const amounts = (named ?? []).map((p) => `${escapeText(p.amount)} ${escapeText(p.currency)}`).join(', ');
  return ` · ${PAID_HEADING}: ${paid.total}${amounts === '' ? '' : ` (${amounts})`}`;
}

/** The section naming the first `lines.length` of them, and its note counting the rest. */
function paidBlocks(lines: readonly Mrkdwn[], total: number): KnownBlock[] {
  const heading = md`*${PAID_HEADING}*`;
  const notes = [
    md`Named because they were watched or looked up in this channel; not matched to any balance change.`,
  ];
  const more = total - lines.length;
  if (lines.length === 0) notes.unshift(md`${total} in all, not named: this message has no room left`);
  else if (more > 0) notes.unshift(md`and ${more} more: ${total} in all`);
  return [wholeSection(lines.length === 0 ? heading : join([heading, ...lines], '\n')), context(...notes)];
}

/**
 * `message` with the paid invoices named after its movements: a section of at most
 * MAX_PAID_LISTED lines (title, exact amount grouped for reading, currency, when, the payment
 * page), "and N more" for the rest, as many as the message still has room for (`appendWithin`);
 * its text counts them, with the named ones' exact amounts when they fit whole. With no room for
 * a block, the text alone counts them. Unchanged when there are none.
 */
export function withPaidInvoices(message: Message, paid: PaidInvoices): Message {
  if (paid.total === 0) return message;
  const named = paid.shown.slice(0, MAX_PAID_LISTED);
  const lines = named.map(line);
  const tries: Addition[] = [];
  for (let n = lines.length; n >= 0; n -= 1) {
    const blocks = paidBlocks(lines.slice(0, n), paid.total);
    tries.push({ blocks, text: words(paid, named.slice(0, n)) }, { blocks, text: words(paid) }, { blocks });
  }
  return appendWithin(message, [...tries, { text: words(paid) }]);
}
