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

/** "2 h 15 min", "3 days": how far `ms` is, in words a person reads at a glance. */
export function duration(ms: number): string {
  const minutes = Math.round(Math.abs(ms) / 60_000);
  if (minutes < 1) return 'less than a minute';
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
  return `${Math.round(hours / 24)} days`;
}

function expiry(invoice: Invoice, now: Date): Mrkdwn {
  const left = invoice.timeout.getTime() - now.getTime();
  return left > 0
    ? md`${slackDate(invoice.timeout)} (expires in ${duration(left)})`
    : md`${slackDate(invoice.timeout)} (expired)`;
}

const money = (amount: Amount, currency: string) => md`\`${amount.toString()}\` ${esc(currency, 40)}`;

/** Status, payment status and amount: the three facts the card and the notification text lead with. */
const headline = (invoice: Invoice, separator: string) =>
  join(
    [
      label(STATUS_LABELS, invoice.status),
      label(PAY_STATUS_LABELS, invoice.payStatus),
      money(invoice.amount, invoice.currency),
    ],
    separator,
  );

const title = (invoice: Invoice) => (invoice.title.trim() === '' ? 'Invoice' : invoice.title);

export interface InvoiceViewOptions {
  /** When the invoice was read; expiry is worded against it. */
  now: Date;
  /** Set when the message is a refresh of an earlier one. */
  refreshedBy?: string;
}

/** The full invoice reply: every field, the two status fields, and the payment-page and refresh buttons. */
export function invoiceMessage(invoice: Invoice, { now, refreshedBy }: InvoiceViewOptions): Message {
  const redirects = [
    invoice.shop.successUrl ? link(invoice.shop.successUrl, 'after success') : undefined,
    invoice.shop.failUrl ? link(invoice.shop.failUrl, 'after failure') : undefined,
  ].filter((m): m is Mrkdwn => m !== undefined);

  const fields = [
    md`*Status*\n${label(STATUS_LABELS, invoice.status)}`,
    md`*Payment*\n${label(PAY_STATUS_LABELS, invoice.payStatus)}`,
    md`*Amount*\n${money(invoice.amount, invoice.currency)}`,
    md`*Fee*\n${money(invoice.fee, invoice.currency)} · paid by ${invoice.feeByClient ? 'the customer' : 'the merchant'}`,
    md`*Created*\n${slackDate(invoice.createdAt)}`,
    md`*Expiry*\n${expiry(invoice, now)}`,
    md`*Shop*\n${esc(invoice.shop.title, 200)}`,
    md`*Sent by e-mail*\n${invoice.sendToEmail ? 'Yes' : 'No'}`,
    ...(redirects.length > 0 ? [md`*Customer is sent to*\n${join(redirects, ' · ')}`] : []),
  ];
  const methods = invoice.methods.length === 0 ? md`none listed` : esc(invoice.methods.join(', '), 2900);
  const stamp = refreshedBy
    ? md`refreshed ${slackDate(now)} by ${mention(refreshedBy)}`
    : md`read ${slackDate(now)}`;

  const blocks: KnownBlock[] = [
    header(title(invoice)),
    ...fieldSections(fields),
    section(md`*Accepted methods*\n${methods}`),
    actions(
      INVOICE_ACTIONS_BLOCK,
      linkButton('Open payment page', invoice.link, ACTION_OPEN_PAYMENT_PAGE),
      actionButton('Refresh', ACTION_REFRESH, invoice.id),
    ),
    context(md`Invoice \`${esc(invoice.id, 100)}\` · ${stamp}`),
  ];
  return { text: fallbackText(summary(invoice, now)), blocks };
}

/** The compact card shown when a payment link is pasted (`chat.unfurl`). */
export function invoiceUnfurl(invoice: Invoice, now: Date): { blocks: KnownBlock[] } {
  return {
    blocks: [
      section(
        md`*${esc(title(invoice), 150)}*\n${headline(invoice, ' · ')}\nExpiry: ${expiry(invoice, now)}`,
      ),
      context(md`${esc(invoice.shop.title, 200)} · invoice \`${esc(invoice.id, 100)}\``),
    ],
  };
}

function summary(invoice: Invoice, now: Date): Mrkdwn {
  return md`Invoice "${esc(title(invoice), 300)}": ${headline(invoice, ', ')}, ${expiry(invoice, now)}`;
}
