import type { KnownBlock } from '@slack/types';
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

export const ACTION_REFRESH = 'refresh_invoice';
export const ACTION_OPEN_PAYMENT_PAGE = 'open_payment_page';
export const ACTION_WATCH = 'watch_invoice';
export const ACTION_STOP_WATCH = 'stop_watch';
const INVOICE_ACTIONS_BLOCK = 'invoice_actions';

/**
 * Labels for the values the API document has seen. Anything else is shown exactly as sent,
 * because the complete sets are "not shown" and guessing a meaning would mislead support staff.
 */
const STATUS_LABELS: Record<string, string> = { open: 'Open' };
const PAY_STATUS_LABELS: Record<string, string> = { none: 'Not paid' };

const label = (labels: Record<string, string>, value: string): Mrkdwn => {
  const known = Object.hasOwn(labels, value) ? labels[value] : undefined;
  return known === undefined ? md`\`${esc(value, 100)}\`` : md`${known}`;
};

/** An invoice status as every view shows it: a label for a value the document has seen, else as sent. */
export const statusLabel = (value: string): Mrkdwn => label(STATUS_LABELS, value);
/** A payment status as every view shows it. */
export const payStatusLabel = (value: string): Mrkdwn => label(PAY_STATUS_LABELS, value);

/** "2 h 15 min", "3 days": how far `ms` is, in words a person reads at a glance. */
export function duration(ms: number): string {
  const minutes = Math.round(Math.abs(ms) / 60_000);
  if (minutes < 1) return 'less than a minute';
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
  return `${Math.round(hours / 24)} days`;
}

export function expiry(invoice: Pick<Invoice, 'timeout'>, now: Date): Mrkdwn {
  const left = invoice.timeout.getTime() - now.getTime();
  return left > 0
    ? md`${slackDate(invoice.timeout)} (expires in ${duration(left)})`
    : md`${slackDate(invoice.timeout)} (expired)`;
}

export const money = (amount: Amount | string, currency: string) =>
  md`\`${amount.toString()}\` ${esc(currency, 40)}`;

/** Status, payment status and amount: the three facts the cards and the notification text lead with. */
export const headline = (invoice: Invoice, separator: string) =>
  join(
    [statusLabel(invoice.status), payStatusLabel(invoice.payStatus), money(invoice.amount, invoice.currency)],
    separator,
  );

export const invoiceTitle = (invoice: Pick<Invoice, 'title'>) =>
  invoice.title.trim() === '' ? 'Invoice' : invoice.title;

export interface InvoiceViewOptions {
  /** When the invoice was read; expiry is worded against it. */
  now: Date;
  /** Set when the message is a refresh of an earlier one. */
  refreshedBy?: string;
  /** Set when someone shared the card in a thread (the message shortcut). */
  sharedBy?: string;
}

/**
 * Every field of an invoice: its title, the fields two columns wide, the accepted methods. A
 * card that stays in place for days says when the invoice expires, not how long is left (that
 * would go stale between edits).
 */
function invoiceBody(invoice: Invoice, now: Date, { lasting = false } = {}): KnownBlock[] {
  const redirects = [
    invoice.shop.successUrl ? link(invoice.shop.successUrl, 'after success') : undefined,
    invoice.shop.failUrl ? link(invoice.shop.failUrl, 'after failure') : undefined,
  ].filter((m): m is Mrkdwn => m !== undefined);

  const fields = [
    md`*Status*\n${statusLabel(invoice.status)}`,
    md`*Payment*\n${payStatusLabel(invoice.payStatus)}`,
    md`*Amount*\n${money(invoice.amount, invoice.currency)}`,
    md`*Fee*\n${money(invoice.fee, invoice.currency)} · paid by ${invoice.feeByClient ? 'the customer' : 'the merchant'}`,
    md`*Created*\n${slackDate(invoice.createdAt)}`,
    md`*Expiry*\n${lasting ? slackDate(invoice.timeout) : expiry(invoice, now)}`,
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
const idLine = (invoice: Invoice) => md`Invoice \`${esc(invoice.id, 100)}\``;

/** The full invoice reply: every field, and the payment-page, Refresh and Watch buttons. */
export function invoiceMessage(
  invoice: Invoice,
  { now, refreshedBy, sharedBy }: InvoiceViewOptions,
): Message {
  const stamp = refreshedBy
    ? md`refreshed ${slackDate(now)} by ${mention(refreshedBy)}`
    : sharedBy
      ? md`shared ${slackDate(now)} by ${mention(sharedBy)}`
      : md`read ${slackDate(now)}`;
  return {
    text: fallbackText(summary(invoice, now)),
    blocks: [
      ...invoiceBody(invoice, now),
      actions(
        INVOICE_ACTIONS_BLOCK,
        payButton(invoice),
        actionButton('Refresh', ACTION_REFRESH, invoice.id),
        watchButton(invoice),
      ),
      context(md`${idLine(invoice)} · ${stamp}`),
    ],
  };
}

/** A watch as its live card shows it. */
export interface LiveWatch {
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
      ...invoiceBody(invoice, now, { lasting: true }),
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

/** The compact card shown when a payment link is pasted (`chat.unfurl`), with a Watch button. */
export function invoiceUnfurl(invoice: Invoice, now: Date): { blocks: KnownBlock[] } {
  return {
    blocks: [
      section(
        md`*${esc(invoiceTitle(invoice), 150)}*\n${headline(invoice, ' · ')}\nExpiry: ${expiry(invoice, now)}`,
      ),
      actions(INVOICE_ACTIONS_BLOCK, watchButton(invoice)),
      context(md`${esc(invoice.shop.title, 200)} · invoice \`${esc(invoice.id, 100)}\``),
    ],
  };
}

function summary(invoice: Invoice, now: Date): Mrkdwn {
  return md`Invoice "${esc(invoiceTitle(invoice), 300)}": ${headline(invoice, ', ')}, ${expiry(invoice, now)}`;
}
