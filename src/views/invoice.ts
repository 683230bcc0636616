import type { KnownBlock } from '@slack/types';
import {
  ACTION_OPEN_PAYMENT_PAGE,
  ACTION_REFRESH,
  ACTION_STOP_WATCH,
  ACTION_WATCH,
} from '../domain/actions.js';
import { awaitsPayment } from '../domain/invoice.js';
import type { Amount, Invoice } from '../payments/index.js';
import {
  actionButton,
  actions,
  context,
  fallbackText,
  fieldSections,
  header,
  linkButton,
  type Message,
  section,
} from './blocks.js';
import { esc, join, link, type Mrkdwn, md, mention, slackDate } from './mrkdwn.js';

const INVOICE_ACTIONS_BLOCK = 'invoice_actions';

/** The invoice's two state fields. */
type StateField = 'status' | 'payStatus';

/**
 * The values the API document has seen, one per field. Its complete sets are "not shown", so any
 * other value is read from what the service sent, and its exact text is shown too (`asSent`).
 */
const SEEN: Record<StateField, string> = { status: 'open', payStatus: 'none' };

/** Words for a value whose own word would mislead: a payment status `none` reads "Not paid". */
const WORDS: Record<StateField, Record<string, string>> = { status: {}, payStatus: { none: 'Not paid' } };

/** The fields as the "as sent" note names them. */
const FIELD_WORDS: Record<StateField, string> = { status: 'status', payStatus: 'payment' };

/** `partially_refunded` → "Partially refunded", `PAID` → "Paid", `onHold` → "On hold". */
export function humanise(raw: string): string {
  const text = raw
    .replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, '$1 $2')
    .split(/[\s_-]/u)
    .filter((word) => word !== '')
    .join(' ')
    .toLowerCase();
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * A status or a payment status as every view shows it (cards, unfurls, the shortcut, thread
 * notes, `/invoice watching`, the App Home): in words, never as code. `none` reads "Not paid";
 * every other value, seen or not, is humanised from what the service sent (`open` "Open",
 * `paid` "Paid", `partially_refunded` "Partially refunded"), never given a meaning of the bot's
 * own. The exact value stays reachable: `asSent` in the context line, and the workflow step's
 * outputs.
 */
export function stateLabel(field: StateField, value: string): Mrkdwn {
  const text = stateWords(field, value);
  return text === '' ? md`(none given)` : esc(text, 100);
}

/** `stateLabel`'s words as plain text, '' for a value of no words (a Work Object's fields: views/invoice-entity.ts). */
export function stateWords(field: StateField, value: string): string {
  const words = WORDS[field];
  return (Object.hasOwn(words, value) ? words[value] : undefined) ?? humanise(value);
}

/** A value exactly as sent, in code; one that code formatting would not show says so in words. */
const rawValue = (value: string) =>
  value === '' ? md`empty` : value.trim() === '' ? md`blank` : md`\`${esc(value, 100)}\``;

/** A state field's value as read, or how it changed: `before` is set for a change. */
interface StateValue {
  field: StateField;
  value: string;
  before?: string | undefined;
}

/**
 * "as sent: status `closed`, payment `paid`": the exact values behind labels made from values the
 * document has not seen (a change shows both sides); `undefined` when every value is one it has
 * seen (`open`, `none`), whose label says all.
 */
export function asSent(values: readonly StateValue[]): Mrkdwn | undefined {
  const unseen = values.filter(
    (v) => v.value !== SEEN[v.field] || (v.before !== undefined && v.before !== SEEN[v.field]),
  );
  if (unseen.length === 0) return undefined;
  const parts = unseen.map((v) =>
    v.before === undefined
      ? md`${FIELD_WORDS[v.field]} ${rawValue(v.value)}`
      : md`${FIELD_WORDS[v.field]} ${rawValue(v.before)} → ${rawValue(v.value)}`,
  );
  return md`as sent: ${join(parts, ', ')}`;
}

/** Both state values of an invoice, for `asSent`. */
export const statesOf = (invoice: Pick<Invoice, 'status' | 'payStatus'>): StateValue[] => [
  { field: 'status', value: invoice.status },
  { field: 'payStatus', value: invoice.payStatus },
];

/** "Closed · Paid" and the exact values behind the labels: a watched invoice in the lists of watches. */
export function statesInBrief(invoice: Pick<Invoice, 'status' | 'payStatus'>): {
  labels: Mrkdwn;
  sent: Mrkdwn | undefined;
} {
  return {
    labels: md`${stateLabel('status', invoice.status)} · ${stateLabel('payStatus', invoice.payStatus)}`,
    sent: asSent(statesOf(invoice)),
  };
}

const hasExpired = (invoice: Pick<Invoice, 'timeout'>, now: Date) =>
  invoice.timeout.getTime() <= now.getTime();

/**
 * An invoice's dates (created, expiry) in one form whatever its state, on every card: the date and
 * time in each reader's own time zone ("Nov 22, 2026 at 10:00"), the exact UTC instant as the
 * fallback. Never "tomorrow" or "yesterday", which change with the reader's day and, next to an
 * absolute date on the same card, read as two kinds of fact; Slack renders the token whenever the
 * message is shown, so it never goes stale.
 */
const onRecord = (date: Date): Mrkdwn => slackDate(date, 'fixed');

/**
 * The expiry: its date, and "(expired)" once it has passed while the invoice still awaits payment.
 * A final invoice (`awaitsPayment`) is never called expired because its time passed.
 */
function expiry(invoice: Pick<Invoice, 'timeout' | 'status' | 'payStatus'>, now: Date): Mrkdwn {
  return awaitsPayment(invoice) && hasExpired(invoice, now)
    ? md`${onRecord(invoice.timeout)} (expired)`
    : onRecord(invoice.timeout);
}

/** The expiry line of a compact card (unfurl, shortcut): none on a final invoice, nothing is left to count down. */
const expiryLine = (invoice: Invoice, now: Date): Mrkdwn =>
  awaitsPayment(invoice) ? md`\nExpiry: ${expiry(invoice, now)}` : md``;

/**
 * An amount and its currency: the exact digits as plain text, copyable as they are and never in
 * code formatting, whose red reads like an error or a loss.
 */
export const money = (amount: Amount | string, currency: string) =>
  md`${amount.toString()} ${esc(currency, 40)}`;

/** Status, payment status and amount: the three facts the cards and the notification text lead with. */
const headline = (invoice: Invoice, separator: string) =>
  join(
    [
      stateLabel('status', invoice.status),
      stateLabel('payStatus', invoice.payStatus),
      money(invoice.amount, invoice.currency),
    ],
    separator,
  );

export const invoiceTitle = (invoice: Pick<Invoice, 'title'>) =>
  invoice.title.trim() === '' ? 'Invoice' : invoice.title;

/** Title, state and amount, and the expiry while there is one to meet: the unfurl's and the shortcut's card. */
export const compactCard = (invoice: Invoice, now: Date) =>
  md`*${esc(invoiceTitle(invoice), 150)}*\n${headline(invoice, ' · ')}${expiryLine(invoice, now)}`;

interface InvoiceViewOptions {
  /** When the invoice was read; expiry is worded against it. */
  now: Date;
  /** Set when the message is a refresh of an earlier one. */
  refreshedBy?: string;
  /** Set when someone shared the card in a thread (the message shortcut). */
  sharedBy?: string;
  /** Whether Watch can start a watch (`Watches.watchable`); by default, while it awaits payment. */
  watchable?: boolean;
}

/**
 * Every field of an invoice: its title, the fields two columns wide, the accepted methods. Its
 * dates are in one form (`onRecord`), never as time left, which would go stale while the card
 * stays in the channel.
 */
function invoiceBody(invoice: Invoice, now: Date): KnownBlock[] {
  const redirects = [
    invoice.shop.successUrl ? link(invoice.shop.successUrl, 'after success') : undefined,
    invoice.shop.failUrl ? link(invoice.shop.failUrl, 'after failure') : undefined,
  ].filter((m): m is Mrkdwn => m !== undefined);

  const fields = [
    md`*Status*\n${stateLabel('status', invoice.status)}`,
    md`*Payment*\n${stateLabel('payStatus', invoice.payStatus)}`,
    md`*Amount*\n${money(invoice.amount, invoice.currency)}`,
    md`*Fee*\n${money(invoice.fee, invoice.currency)} · paid by ${invoice.feeByClient ? 'the customer' : 'the merchant'}`,
    md`*Created*\n${onRecord(invoice.createdAt)}`,
    md`*Expiry*\n${expiry(invoice, now)}`,
    md`*Shop*\n${esc(invoice.shop.title, 200)}`,
    md`*Sent by e-mail*\n${invoice.sendToEmail ? 'Yes' : 'No'}`,
    ...(redirects.length > 0 ? [md`*Customer is sent to*\n${join(redirects, ' · ')}`] : []),
  ];
  const methods = invoice.methods.length === 0 ? md`none listed` : esc(invoice.methods.join(', '), 2900);
  return [
    header(invoiceTitle(invoice)),
    ...fieldSections(fields),
    section(md`*Accepted methods*\n${methods}`),
  ];
}

const payButton = (invoice: Invoice) =>
  linkButton('Open payment page', invoice.link, ACTION_OPEN_PAYMENT_PAGE);
const watchButton = (invoice: Invoice) => actionButton('Watch', ACTION_WATCH, invoice.id);
/** The invoice's id, and the exact state values behind labels the document has not seen. */
const idLine = (invoice: Invoice) => {
  const sent = asSent(statesOf(invoice));
  const id = md`Invoice \`${esc(invoice.id, 100)}\``;
  return sent ? md`${id} · ${sent}` : id;
};

/** The full invoice reply: every field, and the payment-page, Refresh and Watch (when it can start one) buttons. */
export function invoiceMessage(
  invoice: Invoice,
  { now, refreshedBy, sharedBy, watchable = awaitsPayment(invoice) }: InvoiceViewOptions,
): Message {
  const stamp = refreshedBy
    ? md`refreshed ${slackDate(now)} by ${mention(refreshedBy)}`
    : sharedBy
      ? md`shared ${slackDate(now)} by ${mention(sharedBy)}`
      : md`read ${slackDate(now)}`;
  const refresh = actionButton('Refresh', ACTION_REFRESH, invoice.id);
  return {
    text: fallbackText(summary(invoice, now)),
    blocks: [
      ...invoiceBody(invoice, now),
      watchable
        ? actions(INVOICE_ACTIONS_BLOCK, payButton(invoice), refresh, watchButton(invoice))
        : actions(INVOICE_ACTIONS_BLOCK, payButton(invoice), refresh),
      context(md`${idLine(invoice)} · ${stamp}`),
    ],
  };
}

/** A watch as its live card shows it. */
interface LiveWatch {
  id: string;
  watcherId: string;
  startedAt: Date;
  /** Set once the watch has ended, with why, in words. */
  ended?: { at: Date; reason: Mrkdwn } | undefined;
}

/**
 * The live card of a watched invoice, the message the bot keeps current: every field, the
 * payment-page button, and Stop watching while the watch runs.
 */
export function liveInvoiceCard(invoice: Invoice, { now, watch }: { now: Date; watch: LiveWatch }): Message {
  const state = watch.ended
    ? md`No longer watched since ${slackDate(watch.ended.at)}: ${watch.ended.reason}`
    : md`:eyes: Watched since ${slackDate(watch.startedAt)} for ${mention(watch.watcherId)}: changes are posted in the thread`;
  return {
    text: fallbackText(summary(invoice, now)),
    blocks: [
      ...invoiceBody(invoice, now),
      watch.ended
        ? actions(
            INVOICE_ACTIONS_BLOCK,
            payButton(invoice),
            actionButton('Refresh', ACTION_REFRESH, invoice.id),
          )
        : actions(
            INVOICE_ACTIONS_BLOCK,
            payButton(invoice),
            actionButton('Stop watching', ACTION_STOP_WATCH, watch.id),
          ),
      context(idLine(invoice), state),
    ],
  };
}

/**
 * The compact card shown when a payment link is pasted (`chat.unfurl`), with a Watch button when
 * it can start a watch (`Watches.watchable`; by default, while the invoice awaits payment).
 */
export function invoiceUnfurl(
  invoice: Invoice,
  now: Date,
  { watchable = awaitsPayment(invoice) }: { watchable?: boolean } = {},
): { blocks: KnownBlock[] } {
  const sent = asSent(statesOf(invoice));
  const where = md`${esc(invoice.shop.title, 200)} · invoice \`${esc(invoice.id, 100)}\``;
  return {
    blocks: [
      section(compactCard(invoice, now)),
      ...(watchable ? [actions(INVOICE_ACTIONS_BLOCK, watchButton(invoice))] : []),
      context(sent ? md`${where} · ${sent}` : where),
    ],
  };
}

/** The notification text: the headline, and the expiry while the invoice awaits payment. */
function summary(invoice: Invoice, now: Date): Mrkdwn {
  const title = md`Invoice "${esc(invoiceTitle(invoice), 300)}": ${headline(invoice, ', ')}`;
  if (!awaitsPayment(invoice)) return title;
  return hasExpired(invoice, now)
    ? md`${title}, expired ${onRecord(invoice.timeout)}`
    : md`${title}, expires ${onRecord(invoice.timeout)}`;
}
