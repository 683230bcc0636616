import { ACTION_STOP_WATCH } from '../domain/actions.js';
import type { Change, EndReason } from '../domain/watch.js';
import type { Invoice } from '../payments/index.js';
import { actionButton, context, fallbackText, header, type Message, section } from './blocks.js';
import { asSent, invoiceTitle, money, stateLabel, statesInBrief } from './invoice.js';
import { channelMention, esc, join, type Mrkdwn, md, mention, slackDate } from './mrkdwn.js';

const FIELD_NAMES: Record<Change['field'], string> = {
  status: 'Status',
  payStatus: 'Payment',
  amount: 'Amount',
  timeout: 'Expiry',
  methods: 'Accepted methods',
};

/** One side of a change, shown as the invoice card shows that field. */
function side(change: Change, value: string, invoice: Invoice): Mrkdwn {
  switch (change.field) {
    case 'status':
    case 'payStatus':
      return stateLabel(change.field, value);
    case 'amount':
      return money(value, invoice.currency);
    case 'timeout':
      return Number.isNaN(Date.parse(value)) ? esc(value, 100) : slackDate(new Date(value), 'fixed');
    case 'methods':
      return value === '' ? md`none` : esc(value, 900);
  }
}

const changeLine = (change: Change, invoice: Invoice) =>
  md`*${FIELD_NAMES[change.field]}*: ${side(change, change.before, invoice)} → ${side(change, change.after, invoice)}`;

/** The sentence that says a watch ended and why: alone in its thread reply, or after the change that ended it. */
const endedSentence = (invoice: Pick<Invoice, 'id' | 'title'>, reason: Mrkdwn) =>
  md`No longer watching *${esc(invoiceTitle(invoice), 200)}*: ${reason}.`;

/**
 * The thread reply that says what changed ("Not paid → Paid", with the labels the card uses),
 * mentioning the person who started the watch; its context line gives the exact state values
 * behind labels the API document has not seen. When the change ended the watch (`ended`, why),
 * the same reply says so: one change, one notification.
 */
export function transitionMessage(
  invoice: Invoice,
  changes: readonly Change[],
  watcherId: string,
  readAt: Date,
  ended?: Mrkdwn,
): Message {
  const lines = join(
    changes.map((c) => md`• ${changeLine(c, invoice)}`),
    '\n',
  );
  const plainLines = join(
    changes.map((c) => changeLine(c, invoice)),
    '; ',
  );
  const sent = asSent(
    changes.flatMap((c) =>
      c.field === 'status' || c.field === 'payStatus'
        ? [{ field: c.field, value: c.after, before: c.before }]
        : [],
    ),
  );
  const id = md`Invoice \`${esc(invoice.id, 100)}\``;
  const end = ended ? endedSentence(invoice, ended) : undefined;
  const summary = md`Invoice "${esc(invoiceTitle(invoice), 300)}" changed: ${plainLines}`;
  return {
    text: fallbackText(end ? md`${summary}. ${end}` : summary),
    blocks: [
      section(
        md`${mention(watcherId)} *${esc(invoiceTitle(invoice), 200)}* changed:\n${lines}${end ? md`\n${end}` : md``}`,
      ),
      context(md`${sent ? md`${id} · ${sent}` : id} · read ${slackDate(readAt)}`),
    ],
  };
}

interface EndReasonOptions {
  /** Who stopped it. */
  by?: string | undefined;
  graceMinutes: number;
  maxDays: number;
  /** The invoice could not be read from then until the end (the service failing): it ended by the last reading. */
  unreadSince?: Date | undefined;
}

/** Why a watch ended, in words. */
export function endReasonText(reason: EndReason, opts: EndReasonOptions): Mrkdwn {
  const why = reasonWords(reason, opts);
  return opts.unreadSince
    ? md`${why}; could not read the invoice since ${slackDate(opts.unreadSince)}, so the card shows it as last read`
    : why;
}

function reasonWords(reason: EndReason, opts: EndReasonOptions): Mrkdwn {
  switch (reason) {
    case 'stopped':
      return opts.by ? md`stopped by ${mention(opts.by)}` : md`stopped`;
    case 'not_found':
      return md`the payment service no longer knows this invoice`;
    case 'final':
      return md`it no longer awaits payment, so nothing more is expected to change`;
    // Its expiry passed, whatever its state: a paid invoice was not "expired".
    case 'expired':
      return opts.unreadSince
        ? md`its expiry passed more than ${opts.graceMinutes} minutes ago`
        : md`its expiry passed more than ${opts.graceMinutes} minutes ago; this was the last check`;
    case 'max_days':
      return md`it was watched for the longest a watch lasts, ${opts.maxDays} ${opts.maxDays === 1 ? 'day' : 'days'}`;
    case 'card_deleted':
      return md`its card was deleted`;
    case 'not_in_channel':
      return md`the bot can no longer post in this channel`;
    case 'account_disconnected':
      return md`the workspace’s payment account was disconnected, so the bot can no longer read the invoice`;
    case 'account_replaced':
      return md`the workspace’s payment key was replaced by one whose account does not know this invoice`;
  }
}

/** The thread reply when a watch ends. */
export function watchEndedMessage(
  invoice: Pick<Invoice, 'id' | 'title'>,
  reason: Mrkdwn,
  watcherId: string,
): Message {
  const body = md`${mention(watcherId)} ${endedSentence(invoice, reason)}`;
  return { text: fallbackText(body), blocks: [section(body)] };
}

/** A watch as `/invoice watching` lists it. */
export interface WatchListItem {
  id: string;
  invoiceId: string;
  title: string | undefined;
  status: string | undefined;
  payStatus: string | undefined;
  watcherId: string;
  startedAt: Date;
}

/** The most watches listed with their own Stop button; Slack allows 50 blocks. */
export const MAX_LISTED = 20;

/** `/invoice watching`: the channel's active watches, each with a Stop button. */
export function watchListMessage(channelId: string, watches: readonly WatchListItem[]): Message {
  if (watches.length === 0) {
    const body = md`Nothing is watched in ${channelMention(channelId)}. Start with \`/invoice watch ${'<id or payment link>'}\` or the *Watch* button on an invoice card.`;
    return { text: fallbackText(body), blocks: [section(body)] };
  }
  const shown = watches.slice(0, MAX_LISTED);
  const rows = shown.map((w, i) => {
    const brief =
      w.status === undefined || w.payStatus === undefined
        ? undefined
        : statesInBrief({ status: w.status, payStatus: w.payStatus });
    const state = brief ? brief.labels : md`not checked yet`;
    const id = md`\`${esc(w.invoiceId, 100)}\``;
    return section(
      md`*${esc(w.title ?? w.invoiceId, 150)}*\n${state}\n${brief?.sent ? md`${id} · ${brief.sent}` : id} · since ${slackDate(w.startedAt)} for ${mention(w.watcherId)}`,
      // Action ids are unique within a message: one Stop per row, told apart by a suffix.
      actionButton('Stop', `${ACTION_STOP_WATCH}:${i}`, w.id),
    );
  });
  const more = watches.length - shown.length;
  return {
    text: fallbackText(
      md`${watches.length} ${watches.length === 1 ? 'invoice is' : 'invoices are'} watched here`,
    ),
    blocks: [
      header(`Watched in this channel (${watches.length})`),
      ...rows,
      ...(more > 0 ? [context(md`${more} more not shown.`)] : []),
    ],
  };
}

/** Replies to the person who started, stopped or could not start a watch: short and ephemeral. */
export const watchReplies = {
  started: (invoice: Pick<Invoice, 'title'>, inThread: boolean): Message => {
    const where = inThread ? 'in the thread of the card you clicked' : 'in this channel';
    const body = md`Watching *${esc(invoiceTitle(invoice), 200)}*: its live card is ${where}. I will update the card and reply in its thread when the invoice changes.`;
    return { text: fallbackText(body), blocks: [section(body)] };
  },
  already: (invoice: Pick<Invoice, 'title'>, since: Date): Message => {
    const body = md`*${esc(invoiceTitle(invoice), 200)}* is already watched in this channel, since ${slackDate(since)}. Its live card is kept current.`;
    return { text: fallbackText(body), blocks: [section(body)] };
  },
  /** Its card is being posted by another start, or Slack has not confirmed it yet. */
  posting: (invoice: Pick<Invoice, 'title'>, since: Date): Message => {
    const body = md`*${esc(invoiceTitle(invoice), 200)}* is being watched in this channel since ${slackDate(since)}, but Slack has not confirmed its live card yet. If the card has not appeared within a minute, try again.`;
    return { text: fallbackText(body), blocks: [section(body)] };
  },
  /** Slack did not answer the post of the live card, and the card is not found: it may still appear. */
  unconfirmed: (invoice: Pick<Invoice, 'title'>): Message => {
    const body = md`:warning: Slack did not answer in time when I posted the live card of *${esc(invoiceTitle(invoice), 200)}*. If the card appears in this channel, the invoice is watched; if it has not appeared within a minute, nothing is, and you can try again.`;
    return { text: fallbackText(body), blocks: [section(body)] };
  },
  limit: (limit: number): Message => {
    const body = md`:warning: This channel already watches ${limit} invoices, the most it may. Stop one with \`/invoice watching\` first.`;
    return { text: fallbackText(body), blocks: [section(body)] };
  },
  expired: (invoice: Pick<Invoice, 'title' | 'timeout'>): Message => {
    // Worded for every state: a paid invoice past its expiry did not expire. The time is past, so `{ago}` holds.
    const body = md`The expiry of *${esc(invoiceTitle(invoice), 200)}* passed ${slackDate(invoice.timeout, 'ago')}: there is nothing left to watch. \`/invoice\` shows it as it stands.`;
    return { text: fallbackText(body), blocks: [section(body)] };
  },
  /** The invoice no longer awaits payment (`awaitsPayment`): nothing more is expected to change. */
  final: (invoice: Pick<Invoice, 'title' | 'status' | 'payStatus'>): Message => {
    const body = md`*${esc(invoiceTitle(invoice), 200)}* no longer awaits payment (${statesInBrief(invoice).labels}): there is nothing left to watch. \`/invoice\` shows it as it stands.`;
    return { text: fallbackText(body), blocks: [section(body)] };
  },
  /** The watch ended while its card was posted (`why`): the card says so too. */
  endedAtStart: (invoice: Pick<Invoice, 'title'>, why: Mrkdwn): Message => {
    const body = md`The watch of *${esc(invoiceTitle(invoice), 200)}* ended as it started: ${why}. Its card says so.`;
    return { text: fallbackText(body), blocks: [section(body)] };
  },
  inviteFirst: (channelId: string): Message => {
    const body = md`:warning: I cannot post in ${channelMention(channelId)}. Invite me first with \`/invite @Crypto Payments\`, then try again. Nothing is watched yet.`;
    return { text: fallbackText(body), blocks: [section(body)] };
  },
  stopped: (title: string | undefined): Message => {
    const body = md`Stopped watching *${esc(title ?? 'the invoice', 200)}*.`;
    return { text: fallbackText(body), blocks: [section(body)] };
  },
  notWatched: (): Message => {
    const body = md`That invoice is not watched in this channel (any more).`;
    return { text: fallbackText(body), blocks: [section(body)] };
  },
};
