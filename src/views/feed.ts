import type { KnownBlock } from '@slack/types';
import type { BalanceChange, StoredBalance } from '../domain/balance.js';

import { Amount } from '../payments/index.js';
import {
  context,
  fallbackText,
  fieldSections,
  header,
  LIMITS,
  type Message,
  partsWithin,
  section,
} from './blocks.js';
import type { CoinTrend } from './charts.js';
import { digestTable, trendCharts } from './digest-charts.js';
import { type DigestCadenceOf, dayOf } from './digest-time.js';
import { feedLineWithSettings } from './feed-settings.js';
import { exactList, foldedZeros, grouped, signed } from './figures.js';
import { type KeySource, keyFix } from './key.js';
import { channelMention, esc, join, type Mrkdwn, md, mention, slackDate } from './mrkdwn.js';

/** Longest currency title and id shown; the amounts are always shown whole. */
const MAX_TITLE = 80;
const MAX_ID = 40;
/** Characters of a feed or digest message kept for its header, context and "N more" note. */
const RESERVED_CHARS = 800;
/** What a line or a field costs beyond its text. */
const OVERHEAD = 30;

/**
 * A currency by its title, or its id when the title is blank: never "Tether (TRC-20) (USDT-TRC20)",
 * as every amount beside the name already carries the id.
 */
const currencyName = (title: string, id: string) =>
  title.trim() === '' ? md`*${esc(id, MAX_ID)}*` : md`*${esc(title, MAX_TITLE)}*`;

/**
 * One line of the feed: "*Bitcoin*: received *+0.0042* BTC — balance 1,000.0054 BTC". Amounts are
 * every digit as text, grouped for reading, copyable, never in code formatting, whose red reads
 * like a loss; the change is the line's news, so it is bold.
 */
function changeLine(c: BalanceChange): Mrkdwn {
  const id = esc(c.currency, MAX_ID);
  const delta = signed(c.delta, grouped);
  const what = c.delta.sign() > 0 ? md`received *${delta}* ${id}` : md`*${delta}* ${id} withdrawn or moved`;
  return md`${currencyName(c.title, c.currency)}: ${what} — balance ${grouped(c.after)} ${id}`;
}

/** Items that fit the message budget, and how many did not. */
function fitting<T>(items: readonly T[], render: (item: T) => Mrkdwn): { shown: Mrkdwn[]; omitted: number } {
  const shown: Mrkdwn[] = [];
  let chars = RESERVED_CHARS;
  for (const item of items) {
    const line = render(item);
    chars += line.text.length + OVERHEAD;
    if (chars > LIMITS.messageChars) break;
    shown.push(line);
  }
  return { shown, omitted: items.length - shown.length };
}

/** Lines grouped into sections of at most 3,000 characters each. */
function lineSections(lines: readonly Mrkdwn[]): KnownBlock[] {
  const blocks: KnownBlock[] = [];
  let current: Mrkdwn[] = [];
  let size = 0;
  for (const line of lines) {
    if (current.length > 0 && size + line.text.length + 1 > LIMITS.sectionText) {
      blocks.push(section(join(current, '\n')));
      current = [];
      size = 0;
    }
    current.push(line);
    size += line.text.length + 1;
  }
  if (current.length > 0) blocks.push(section(join(current, '\n')));
  return blocks;
}

/**
 * The feed's message for one reading: every currency that moved, as one message within Slack's
 * limits. With `since`, the reading before it is that old (src/feed/poll.ts says when that is a
 * gap): the change happened somewhere between the two, and may sum several payments.
 */
export function feedMessage(changes: readonly BalanceChange[], readAt: Date, since?: Date): Message {
  const { shown, omitted } = fitting(changes, changeLine);
  const rises = changes.filter((c) => c.delta.sign() > 0);
  // At most twenty rises, each whole: a long list ends between two, never inside an amount.
  const named = rises.slice(0, 20).map((c) => md`${signed(c.delta)} ${esc(c.currency, MAX_ID)}`);
  const received = partsWithin(named, ', ', LIMITS.topLevelText - 40);
  const left = rises.length - named.length + received.omitted;
  const summary =
    rises.length === changes.length
      ? md`Received: ${received.shown}${left === 0 ? md`` : md` and ${left} more`}`
      : md`Balance changed in ${changes.length} ${changes.length === 1 ? 'currency' : 'currencies'}`;
  const notes = [
    since === undefined
      ? md`:moneybag: Payments feed · read ${slackDate(readAt)}`
      : md`:moneybag: Payments feed · changed between ${slackDate(since)} and ${slackDate(readAt)}: the balance could not be read in between, so this is the net change over that time`,
  ];
  if (omitted > 0)
    notes.push(
      md`${omitted} more ${omitted === 1 ? 'change' : 'changes'} not shown: \`/balance\` shows every balance`,
    );
  return { text: fallbackText(summary), blocks: [...lineSections(shown), context(...notes)] };
}

interface DigestInput {
  /** The balances as last read. */
  balances: StoredBalance;
  /** When they were read. */
  asOf: Date;
  /**
   * The balances the last digest showed; for a feed's first digest, those 24 hours (or 7 days)
   * earlier, or the oldest reading the feed has when it is younger.
   */
  before: StoredBalance | undefined;
  /** When `before` was read. */
  beforeAt: Date | undefined;
  rises: number;
  falls: number;
  /** The currencies the feed saw move in the period, even if they are back where they were. */
  moved?: ReadonlySet<string>;
  /** Set when the digest goes out late (the bot was down at its time): by how much. */
  lateByMs?: number | undefined;
  /** Each coin's balance over the last week, from the feed's kept readings, for the charts. */
  trends?: readonly CoinTrend[];
  /** What the digest covers, when the channel chose a weekly one (src/feed/settings.ts); a day by default. */
  period?: 'week';
  /**
   * Where its changes and counts start when an earlier digest was sent (src/feed/digest.ts): the
   * "as of" that one showed, or the oldest reading kept when that one's reading is not kept.
   */
  since?: { at: Date; from: 'last digest' | 'oldest kept' } | undefined;
}

/** A digest that follows the last one by a day (or a week) give or take this covers the usual period. */
const USUAL_SPAN_SLACK_MS = 5 * 60_000;

/**
 * Where the changes and counts start, when that is not the usual day or week before: the note
 * that says when, and the words the changes and counts are labelled with instead of "24 h". Only
 * whether it is said depends on the two "as of" times; what a digest names never does.
 */
function unusualStart(d: DigestInput, periodMs: number): { note: Mrkdwn; span: string } | undefined {
  if (d.since?.from === 'oldest kept')
    return {
      note: md`changes since ${slackDate(d.since.at)}, the oldest reading kept`,
      span: 'since the oldest reading kept',
    };
  if (d.since)
    return Math.abs(d.asOf.getTime() - d.since.at.getTime() - periodMs) < USUAL_SPAN_SLACK_MS
      ? undefined
      : { note: md`changes since ${slackDate(d.since.at)}, the last digest`, span: 'since the last digest' };
  if (d.beforeAt && d.asOf.getTime() - d.beforeAt.getTime() < periodMs - 3_600_000)
    return {
      note: md`changes since ${slackDate(d.beforeAt)}, when the feed began`,
      span: 'since the feed began',
    };
  return undefined;
}

/** Characters of the text kept for the charts' figures. */
const CHART_TEXT_CHARS = 1400;
/** Characters of the text kept for " Balances: " between the lead and the figures. */
const LEAD_CHARS = 20;

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** A stored balance as an amount; one that is missing or unreadable counts as 0. */
const amountOf = (entry: { balance: string } | undefined) =>
  (entry && Amount.parse(entry.balance)) ?? Amount.ZERO;

interface DigestRow {
  id: string;
  title: string;
  is: Amount;
  /** `undefined` when the feed has no reading a day before to compare with. */
  was: Amount | undefined;
}

/**
 * The digest's rows: every currency except those at 0 now that were at 0 (or absent) a day
 * before and that the feed did not see move in between, which are only counted. A currency that
 * moved to or from 0 is listed, one that went 0 → 5 → 0 within the day too.
 */
function digestRows(d: DigestInput): { listed: DigestRow[]; zeros: number } {
  const listed: DigestRow[] = [];
  let zeros = 0;
  for (const [id, now] of Object.entries(d.balances)) {
    const is = amountOf(now);
    // A currency that was not there a day before rose from 0.
    const was = d.before ? amountOf(d.before[id]) : undefined;
    if (is.isZero() && (was === undefined || was.isZero()) && !d.moved?.has(id)) zeros += 1;
    else listed.push({ id, title: now.title, is, was });
  }
  return { listed, zeros };
}

/**
 * The daily digest: balances per currency with their change over 24 hours (grouped for reading,
 * exact in the text fallback), the currencies at 0 that did not move folded into one line, and the
 * feed's counts.
 */
export function digestMessage(d: DigestInput): Message {
  const { listed, zeros } = digestRows(d);
  const weekly = d.period === 'week';
  const unusual = unusualStart(d, (weekly ? 7 * 24 : 24) * 3_600_000);
  // The changes and counts say what they cover: the usual day or week, or since when.
  const span = unusual?.span ?? (weekly ? 'in 7 days' : 'in 24 h');
  const table = digestTable(listed, span);
  const rows = fitting(table ? [] : listed, ({ id, title, is, was }) => {
    const change = was === undefined ? md`` : md` · ${signed(is.minus(was), grouped)} ${span}`;
    return md`${currencyName(title, id)}\n${grouped(is)} ${esc(id, MAX_ID)}${change}`;
  });
  const kind = weekly ? 'Weekly balance digest' : 'Daily balance digest';
  const title = d.lateByMs === undefined ? kind : `${kind} (late)`;
  const counts = md`The feed saw ${plural(d.rises, 'rise', 'rises')} and ${plural(d.falls, 'fall', 'falls')} ${unusual?.span ?? (weekly ? 'in the last 7 days' : 'in the last 24 hours')}.`;
  const notes = [md`Balances as of ${slackDate(d.asOf)}`];
  if (unusual) notes.push(unusual.note);
  if (d.lateByMs !== undefined)
    notes.push(md`sent ${Math.round(d.lateByMs / 60_000)} min late: the bot was not running at digest time`);
  const omitted = table ? table.omitted : rows.omitted;
  if (omitted > 0) notes.push(md`${plural(omitted, 'more currency', 'more currencies')} not shown`);
  if (zeros > 0) notes.push(foldedZeros(zeros, listed.length > 0));
  const body: KnownBlock[] =
    Object.keys(d.balances).length === 0
      ? [section(md`The account holds no cryptocurrency yet.`)]
      : rows.shown.length === 0
        ? []
        : fieldSections(rows.shown);
  const charts = trendCharts(d.trends ?? [], CHART_TEXT_CHARS);
  const lead =
    charts.blocks.length === 0 ? md`${title}: ${counts}` : md`${title}: ${counts} ${charts.figures}.`;
  const figures = exactList(
    listed.map((r) => [r.id, r.is] as const),
    LIMITS.topLevelText - lead.text.length - LEAD_CHARS,
  );
  return {
    text: fallbackText(listed.length === 0 ? lead : md`${lead} Balances: ${figures}`),
    blocks: [header(title), section(counts), ...charts.blocks, ...body, context(...notes)],
    ...(table ? { attachments: [table.attachment] } : {}),
  };
}

/** Posted in the channel when it subscribes: who, the digest time, and the balance it starts from. */
export function subscribedMessage(input: {
  channelId: string;
  userId: string;
  digest: string;
  balances: StoredBalance;
  readAt: Date;
  pollSeconds: number;
}): Message {
  const every =
    input.pollSeconds % 60 === 0
      ? plural(input.pollSeconds / 60, 'minute', 'minutes')
      : plural(input.pollSeconds, 'second', 'seconds');
  const intro = md`:moneybag: ${mention(input.userId)} turned on the payments feed in ${channelMention(input.channelId)}: every ${every} the bot reads the balance and posts here what arrived or left, and a digest every day at ${input.digest}. \`/balance unsubscribe\` turns it off.`;
  const entries = Object.entries(input.balances);
  const funded = entries.flatMap(([id, e]) => {
    const is = amountOf(e);
    return is.isZero() ? [] : [{ id, title: e.title, is }];
  });
  const rows = fitting(
    funded,
    ({ id, title, is }) => md`${currencyName(title, id)}\n${grouped(is)} ${esc(id, MAX_ID)}`,
  );
  const notes = [md`Starting balance, read ${slackDate(input.readAt)}`];
  if (rows.omitted > 0) notes.push(md`${plural(rows.omitted, 'more currency', 'more currencies')} not shown`);
  const zeros = entries.length - funded.length;
  if (zeros > 0) notes.push(foldedZeros(zeros, rows.shown.length > 0));
  return {
    text: fallbackText(md`Payments feed turned on in this channel; daily digest at ${input.digest}`),
    blocks: [
      section(intro),
      ...(entries.length === 0
        ? [section(md`The account holds no cryptocurrency yet.`)]
        : fieldSections(rows.shown)),
      context(...notes),
    ],
  };
}

/** Posted in the channel when its feed is turned off. */
export function unsubscribedMessage(userId: string): Message {
  const body = md`${mention(userId)} turned off the payments feed in this channel.`;
  return { text: fallbackText(body), blocks: [section(body)] };
}

/** Said once in each feed channel while the payment service rejects the key. */
export function keyRejectedNotice(source: KeySource): Message {
  const body = md`:warning: The payment service rejects the bot’s API key, so the payments feed is paused. It resumes by itself once ${keyFix(source)}; nothing is lost meanwhile: the first reading after that shows what changed.`;
  return { text: fallbackText(body), blocks: [section(body)] };
}

/** Sent to the subscriber when their channel may no longer receive the feed. */
export function feedStoppedNotice(channelId: string, why: Mrkdwn): Message {
  const body = md`:warning: The payments feed in ${channelMention(channelId)} has stopped: ${why}. Subscribe again in a private channel of this workspace if you still want it.`;
  return { text: fallbackText(body), blocks: [section(body)] };
}

export interface SubscriptionListItem {
  channelId: string;
  subscriberId: string;
  digest: string;
  since: Date;
}

/** `/balance subscriptions`: the workspace's feeds. */
export function subscriptionListMessage(items: readonly SubscriptionListItem[]): Message {
  if (items.length === 0) {
    const body = md`No channel receives the payments feed. \`/balance subscribe\` in a private channel turns it on there.`;
    return { text: fallbackText(body), blocks: [section(body)] };
  }
  // One section a feed, for its Settings button: the header and the note leave 48 of Slack's 50 blocks.
  const rows = fitting(
    items.slice(0, LIMITS.blocks - 2),
    (i) =>
      md`${channelMention(i.channelId)} · digest ${i.digest} · since ${slackDate(i.since)} by ${mention(i.subscriberId)}`,
  );
  const omitted = items.length - rows.shown.length;
  const notes = omitted > 0 ? [context(md`${plural(omitted, 'more feed', 'more feeds')} not shown`)] : [];
  return {
    text: fallbackText(md`${plural(items.length, 'channel receives', 'channels receive')} the payments feed`),
    blocks: [
      header('Payments feeds'),
      ...rows.shown.map((line, i) => feedLineWithSettings(line, items[i]?.channelId ?? '')),
      ...notes,
    ],
  };
}

/** Replies to the person subscribing or unsubscribing: short and ephemeral. */
export const feedReplies = {
  subscribed: (digest: string): Message => {
    const body = md`Done: the payments feed is on in this channel, with a digest every day at ${digest}.`;
    return { text: fallbackText(body), blocks: [section(body)] };
  },
  /** The channel's feed: since when, and its digest at `digest` as its Settings send it. */
  already: (digest: string, cadence: DigestCadenceOf, since: Date): Message => {
    const when =
      cadence.digest === 'off'
        ? md`its digest off in this feed’s Settings (its time kept: ${digest})`
        : cadence.digest === 'weekly'
          ? md`a weekly digest every ${dayOf(cadence)} at ${digest}`
          : md`a digest every day at ${digest}`;
    const body = md`This channel already receives the payments feed, since ${slackDate(since)}, with ${when}. \`/balance subscribe HH:MM [Area/City]\` moves the digest.`;
    return { text: fallbackText(body), blocks: [section(body)] };
  },
  notSubscribed: (): Message => {
    const body = md`This channel does not receive the payments feed.`;
    return { text: fallbackText(body), blocks: [section(body)] };
  },
  unsubscribed: (): Message => {
    const body = md`The payments feed is off in this channel.`;
    return { text: fallbackText(body), blocks: [section(body)] };
  },
  badTime: (text: string): Message => {
    const body = md`:warning: \`${esc(text, 100)}\` is not a time and time zone. Use \`/balance subscribe HH:MM Area/City\`, for example \`/balance subscribe 08:30 Europe/Berlin\`; the default is 09:00 in your own Slack time zone.`;
    return { text: fallbackText(body), blocks: [section(body)] };
  },
  inviteFirst: (channelId: string): Message => {
    const body = md`:warning: I cannot see or post in ${channelMention(channelId)}. Invite me first with \`/invite @Crypto Payments\`, then try again.`;
    return { text: fallbackText(body), blocks: [section(body)] };
  },
};
