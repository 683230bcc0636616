import {
  CustomFieldType,
  type EntityActionButton,
  type EntityCustomField,
  type EntityMetadata,
  EntityType,
} from '@slack/types';
import type { Refusal } from '../access.js';
import {
  ACTION_ENTITY_REFRESH,
  ACTION_ENTITY_STOP_WATCH,
  ACTION_ENTITY_WATCH,
  ACTION_OPEN_PAYMENT_PAGE,
} from '../domain/actions.js';
import { awaitsPayment } from '../domain/invoice.js';
import type { Invoice } from '../payments/index.js';
import { cut } from '../text.js';
import { invoiceTitle, stateWords } from './invoice.js';

/**
 * An invoice as a Slack Work Object (docs/slack.md#work-objects): the entity its card carries
 * (an unfurl, the `/invoice` card, a watch's live card) and the one its side panel (the
 * flexpane) shows to the person who opened it. Types are @slack/types' own.
 *
 * The card is seen by everyone in the conversation, so it carries only what the bot's cards
 * already show there: the title, the status and payment status in words, the amount and, while
 * the invoice awaits payment, its expiry. Values are plain text (Slack renders no mrkdwn in an
 * entity's fields), cut to the limits below.
 */

/** The entity type the manifest declares (`features.rich_previews.entity_types`). */
export const INVOICE_ENTITY_TYPE: string = EntityType.Item;

/** `external_ref.type` of an invoice, echoed back by Slack in `entity_details_requested`. */
export const INVOICE_REF_TYPE = 'invoice';

/** The product the card names; the app's display name in the manifest. */
const PRODUCT_NAME = 'Crypto Payments';

/** Longest field value and title this bot sends (Slack's card shows about a line of either). */
const MAX_VALUE = 500;
const MAX_TITLE = 150;

/** How many watches the side panel lists at most, each of its lists. */
export const MAX_LISTED = 20;

/** What an installation's id turns into in a ref: the one workspace has the id ''. */
const WORKSPACE = 'workspace';

/**
 * The invoice's stable id in Slack (`external_ref.id`): the invoice id scoped to the installation
 * whose key reads it, so two merchants' invoices never share one, and a panel is only filled by
 * the installation the card came from. It never changes for the same invoice and installation.
 */
export const invoiceRefId = (installation: string, invoiceId: string): string =>
  `${installation === '' ? WORKSPACE : installation}:${invoiceId}`;

/** The installation and invoice id a ref names, or `undefined` for one the bot did not write. */
export function parseInvoiceRefId(id: string): { installation: string; invoiceId: string } | undefined {
  const at = id.lastIndexOf(':');
  if (at <= 0) return undefined;
  const scope = id.slice(0, at);
  const installation = scope === WORKSPACE ? '' : /^[A-Z0-9]+$/.test(scope) ? scope : undefined;
  return installation === undefined ? undefined : { installation, invoiceId: id.slice(at + 1) };
}

const words = (field: 'status' | 'payStatus', value: string) =>
  cut(stateWords(field, value) || '(none given)', 100);

/** A state's colour on the card: green once paid, grey when final otherwise, none while it awaits payment. */
const tagColor = (invoice: Pick<Invoice, 'status' | 'payStatus'>) =>
  invoice.payStatus === 'paid' ? 'green' : awaitsPayment(invoice) ? undefined : 'gray';

const text = (
  key: string,
  label: string,
  value: string,
  more: Pick<EntityCustomField, 'tag_color' | 'long' | 'format'> = {},
): EntityCustomField => ({ key, label, type: CustomFieldType.String, value: cut(value, MAX_VALUE), ...more });

const timestamp = (key: string, label: string, date: Date): EntityCustomField => ({
  key,
  label,
  type: CustomFieldType.Timestamp,
  value: Math.floor(date.getTime() / 1000),
});

/** Title, states, amount and expiry: all the card shows. */
function cardFields(invoice: Invoice, amount: string): EntityCustomField[] {
  const color = tagColor(invoice);
  return [
    text('status', 'Status', words('status', invoice.status), color ? { tag_color: color } : {}),
    text('payment', 'Payment', words('payStatus', invoice.payStatus), color ? { tag_color: color } : {}),
    text('amount', 'Amount', `${amount} ${invoice.currency}`),
    ...(awaitsPayment(invoice) ? [timestamp('expiry', 'Expiry', invoice.timeout)] : []),
  ];
}

interface EntityBase {
  /** The installation whose key read the invoice: '' for the one workspace. */
  installation: string;
}

function entityOf(
  invoice: Invoice,
  { installation }: EntityBase,
  fields: EntityCustomField[],
): EntityMetadata {
  return {
    entity_type: INVOICE_ENTITY_TYPE,
    external_ref: { id: invoiceRefId(installation, invoice.id), type: INVOICE_REF_TYPE },
    url: invoice.link,
    entity_payload: {
      attributes: {
        title: { text: cut(invoiceTitle(invoice), MAX_TITLE) },
        display_type: 'Invoice',
        display_id: invoice.id,
        product_name: PRODUCT_NAME,
      },
      custom_fields: fields,
      display_order: fields.map((f) => f.key),
    },
  };
}

/**
 * The entity a card carries: with `appUnfurlUrl` (the exact URL pasted) for `chat.unfurl`, without
 * for `chat.postMessage` and a reply. Its amount is the exact digits the service sent.
 */
export function invoiceCardEntity(
  invoice: Invoice,
  base: EntityBase & { appUnfurlUrl?: string },
): EntityMetadata {
  const entity = entityOf(invoice, base, cardFields(invoice, invoice.amount.toString()));
  return base.appUnfurlUrl === undefined ? entity : { ...entity, app_unfurl_url: base.appUnfurlUrl };
}

/**
 * The entity of a watch's live card. `chat.update` takes no entities, so the one posted with the
 * card stays as it was while the card's blocks follow the invoice: it carries the title and what
 * to open for the state, never a state or an amount that the next change would leave stale. The
 * side panel reads the invoice afresh each time it is opened.
 */
export function liveCardEntity(invoice: Invoice, base: EntityBase): EntityMetadata {
  return entityOf(invoice, base, [
    text('live', 'Watched', 'The card above and this panel show its current state'),
  ]);
}

/** A watch of the invoice, as the side panel lists it. */
export interface PanelWatch {
  channelId: string;
  startedAt: Date;
  /** When it ended, if it has. */
  endedAt?: Date | undefined;
}

/** A state the bot's watches saw the invoice in, and when. */
export interface SeenState {
  status: string;
  payStatus: string;
  at: Date;
}

export interface PanelOptions extends EntityBase {
  /** The opener's locale (`user_locale`, `en-US`): dates and the grouping of amounts follow it. */
  locale: string;
  /** Every watch of the invoice in this installation, oldest first. */
  watches: readonly PanelWatch[];
  /** The states the watches saw it in, oldest first. */
  seen: readonly SeenState[];
  /** The conversation the panel was opened from, when Slack says: Watch and Stop watching act there. */
  channelId?: string | undefined;
  /** Whether a watch can start (`Watches.watchable`). */
  watchable: boolean;
}

/** `user_locale` as Intl takes it; a tag Intl does not know reads as `en-US`. */
export function panelLocale(raw: string): string {
  try {
    return Intl.getCanonicalLocales(raw.replace('_', '-'))[0] ?? 'en-US';
  } catch {
    return 'en-US';
  }
}

/**
 * The exact digits in the locale's grouping and decimal sign: `1234567.8900` reads
 * `1.234.567,8900` in `de-DE`. Only separators change: no digit is added, dropped or rounded.
 */
export function localeDigits(plain: string, locale: string): string {
  const parts = new Intl.NumberFormat(locale, { useGrouping: true }).formatToParts(1234567.5);
  const group = parts.find((p) => p.type === 'group')?.value ?? ',';
  const decimal = parts.find((p) => p.type === 'decimal')?.value ?? '.';
  const sign = plain.startsWith('-') ? '-' : '';
  const [whole = '', fraction] = plain.slice(sign.length).split('.');
  const grouped = whole.replace(/\B(?=(?:\d{3})+$)/g, group);
  return `${sign}${grouped}${fraction === undefined ? '' : `${decimal}${fraction}`}`;
}

/** A date and time in the locale, in UTC (the panel says so): an instant every reader reads alike. */
const localeDate = (date: Date, locale: string): string =>
  `${new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(date)} UTC`;

/** The latest lines (at most MAX_LISTED, within a field's length), and how many earlier ones were left out. */
function listed(lines: readonly string[]): string {
  // The latest whole lines that fit beside the note, never a line cut in half.
  const room = MAX_VALUE - '(999 earlier not shown)\n'.length;
  const shown: string[] = [];
  let used = 0;
  for (const line of lines.slice(-MAX_LISTED).reverse()) {
    if (used + line.length + 1 > room) break;
    shown.unshift(line);
    used += line.length + 1;
  }
  const more = lines.length - shown.length;
  return [...(more > 0 ? [`(${more} earlier not shown)`] : []), ...shown].join('\n');
}

/** Every field `/invoice` shows, in the opener's locale. */
function detailFields(invoice: Invoice, locale: string): EntityCustomField[] {
  const money = (digits: string) => `${localeDigits(digits, locale)} ${invoice.currency}`;
  const redirects = [
    invoice.shop.successUrl ? `after success: ${invoice.shop.successUrl}` : undefined,
    invoice.shop.failUrl ? `after failure: ${invoice.shop.failUrl}` : undefined,
  ].filter((r): r is string => r !== undefined);
  return [
    ...cardFields(invoice, localeDigits(invoice.amount.toString(), locale)).filter((f) => f.key !== 'expiry'),
    text(
      'fee',
      'Fee',
      `${money(invoice.fee.toString())} · paid by ${invoice.feeByClient ? 'the customer' : 'the merchant'}`,
    ),
    text('created', 'Created', localeDate(invoice.createdAt, locale)),
    text('expiry', 'Expiry', localeDate(invoice.timeout, locale)),
    text('shop', 'Shop', invoice.shop.title || '(none given)'),
    text('email', 'Sent by e-mail', invoice.sendToEmail ? 'Yes' : 'No'),
    ...(redirects.length > 0
      ? [text('redirects', 'Customer is sent to', redirects.join('\n'), { long: true })]
      : []),
    text(
      'methods',
      'Accepted methods',
      invoice.methods.length === 0 ? 'none listed' : invoice.methods.join(', '),
      {
        long: true,
      },
    ),
    text('invoice_id', 'Invoice id', invoice.id),
  ];
}

/** Where and since when the invoice is watched, where it was before, and the states its watches saw. */
function watchFields({ locale, watches, seen }: PanelOptions): EntityCustomField[] {
  const line = (w: PanelWatch) =>
    w.endedAt === undefined
      ? `<#${w.channelId}> since ${localeDate(w.startedAt, locale)}`
      : `<#${w.channelId}> from ${localeDate(w.startedAt, locale)} to ${localeDate(w.endedAt, locale)}`;
  const active = watches.filter((w) => w.endedAt === undefined);
  const ended = watches.filter((w) => w.endedAt !== undefined);
  return [
    text('watched', 'Watched', active.length === 0 ? 'Not watched' : listed(active.map(line)), {
      long: true,
      format: 'markdown',
    }),
    ...(ended.length === 0
      ? []
      : [
          text('watched_before', 'Watched before', listed(ended.map(line)), {
            long: true,
            format: 'markdown',
          }),
        ]),
    text(
      'states_seen',
      'States seen',
      seen.length === 0
        ? 'None yet: the bot sees an invoice’s states while it is watched'
        : listed(
            seen.map(
              (s) =>
                `${words('status', s.status)} · ${words('payStatus', s.payStatus)} — ${localeDate(s.at, locale)}`,
            ),
          ),
      { long: true },
    ),
  ];
}

/**
 * What a panel button carries, since a click in the panel says neither where the panel was
 * opened nor the opener's locale: `<invoice id> <channel id or -> <locale>`
 * (src/listeners/actions/button-value.ts reads it).
 */
export const panelValue = (invoiceId: string, channelId: string | undefined, locale: string) =>
  `${invoiceId} ${channelId ?? '-'} ${locale}`;

/** Refresh, Watch or Stop watching where it was opened, and the payment page: Slack shows at most 2 primary and 5 overflow. */
function panelActions(invoice: Invoice, options: PanelOptions) {
  const { channelId } = options;
  const watchedHere =
    channelId !== undefined &&
    options.watches.some((w) => w.channelId === channelId && w.endedAt === undefined);
  const value = panelValue(invoice.id, channelId, options.locale);
  const primary: EntityActionButton[] = [{ text: 'Refresh', action_id: ACTION_ENTITY_REFRESH, value }];
  if (watchedHere) primary.push({ text: 'Stop watching', action_id: ACTION_ENTITY_STOP_WATCH, value });
  else if (channelId !== undefined && options.watchable)
    primary.push({ text: 'Watch', action_id: ACTION_ENTITY_WATCH, value, style: 'primary' });
  const overflow: EntityActionButton[] = [
    { text: 'Open payment page', action_id: ACTION_OPEN_PAYMENT_PAGE, url: invoice.link },
  ];
  return { primary_actions: primary, overflow_actions: overflow };
}

/** The side panel: the whole invoice, its watches and the states they saw, with the actions that fit it. */
export function invoicePanelEntity(invoice: Invoice, options: PanelOptions): EntityMetadata {
  const locale = panelLocale(options.locale);
  const opts = { ...options, locale };
  const entity = entityOf(invoice, options, [...detailFields(invoice, locale), ...watchFields(opts)]);
  return {
    ...entity,
    entity_payload: {
      ...entity.entity_payload,
      attributes: { ...entity.entity_payload.attributes, locale },
      actions: panelActions(invoice, opts),
    },
  };
}

/** What `entity.presentDetails` shows instead of the panel (its `error` argument). */
export interface PanelError {
  status: 'restricted' | 'not_found' | 'internal_error' | 'timeout' | 'custom';
  custom_title?: string;
  custom_message?: string;
}

/**
 * The panel refused, in words, with Slack's `restricted` view. Someone of another organisation is
 * told only that the panel is for the members of the workspace it belongs to: nothing of it.
 */
export function panelRefusal(refusal: Refusal): PanelError {
  const message =
    refusal === 'guest'
      ? 'Guests of the workspace do not see the merchant’s invoices in full. Ask a full member of the workspace.'
      : 'This invoice’s details are only for members of the workspace it belongs to.';
  return { status: 'restricted', custom_title: 'You cannot open this invoice', custom_message: message };
}

/** The invoice is not found with this installation's key (a ref of another merchant's, or deleted). */
export const PANEL_NOT_FOUND: PanelError = {
  status: 'not_found',
  custom_title: 'Invoice not found',
  custom_message: 'The payment service does not know this invoice for this workspace.',
};

/** The workspace's payment account is not connected: nothing can be read yet. */
export const PANEL_NOT_CONNECTED: PanelError = {
  status: 'custom',
  custom_title: 'The payment account is not connected',
  custom_message: 'Whoever installed the app can connect it in the app’s Home tab.',
};
