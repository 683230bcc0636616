import type { BalanceEntry } from '../payments/index.js';
import { context, fallbackText, fieldSections, header, LIMITS, type Message, section } from './blocks.js';
import { esc, join, type Mrkdwn, md, slackDate } from './mrkdwn.js';

export const BALANCE_TITLE = 'Balance across all projects';
export const NO_BALANCES =
  'Your account holds no cryptocurrency yet. Balances appear here once customers pay invoices in any of your projects.';

/** Longest currency title and id shown in a row; the amount is always shown whole. */
const MAX_TITLE = 80;
const MAX_ID = 40;
/**
 * Characters kept free of rows: the header, the context line (a date and the "N more" note)
 * and the `type` names Slack counts with the text. Rows get the rest of the message budget.
 */
const RESERVED_CHARS = 600;
/** What a field costs beyond its text: its `mrkdwn` type, and a share of its section's. */
const FIELD_OVERHEAD = 30;

/** A currency's row: its title, then the exact amount as plain text (copyable, never red code) and its id. */
const row = (e: BalanceEntry): Mrkdwn =>
  md`*${esc(e.title, MAX_TITLE)}*\n${e.balance.toString()} ${esc(e.id, MAX_ID)}`;

/** Non-zero balances first, zero ones after, without copying a list of 20,000 currencies. */
function* fundedFirst(entries: readonly BalanceEntry[]): Generator<BalanceEntry> {
  for (const e of entries) if (!e.balance.isZero()) yield e;
  for (const e of entries) if (e.balance.isZero()) yield e;
}

/**
 * The rows that fit in one message, in order; building stops as soon as the next one would not
 * fit, so a service listing 20,000 currencies costs no more than one that lists a few hundred.
 */
function fittingRows(entries: readonly BalanceEntry[]): Mrkdwn[] {
  const rows: Mrkdwn[] = [];
  let chars = RESERVED_CHARS;
  for (const entry of fundedFirst(entries)) {
    const next = row(entry);
    chars += next.text.length + FIELD_OVERHEAD;
    if (chars > LIMITS.messageChars) break;
    rows.push(next);
  }
  return rows;
}

/** "0.5 BTC, 12 ETC": the funded currencies for the notification text, stopping once it is full. */
function fundedSummary(entries: readonly BalanceEntry[]): Mrkdwn {
  const parts: Mrkdwn[] = [];
  let chars = 0;
  for (const e of entries) {
    if (e.balance.isZero()) continue;
    const part = md`${e.balance.toString()} ${esc(e.id, MAX_ID)}`;
    parts.push(part);
    chars += part.text.length + 2;
    if (chars > LIMITS.topLevelText) break;
  }
  return parts.length === 0 ? md`all zero` : join(parts, ', ');
}

/**
 * The merchant's balance: one row per currency (title, id, exact amount), non-zero balances
 * first and zero ones after them, then when it was read. Rows that cannot fit in one Slack
 * message (12,000 characters) are counted and the count is shown, never dropped silently.
 */
export function balanceMessage(entries: readonly BalanceEntry[], readAt: Date): Message {
  const readLine = md`Total across all projects · read ${slackDate(readAt)}`;
  if (entries.length === 0) {
    return {
      text: fallbackText(md`${BALANCE_TITLE}: ${NO_BALANCES}`),
      blocks: [header(BALANCE_TITLE), section(md`${NO_BALANCES}`), context(readLine)],
    };
  }

  const rows = fittingRows(entries);
  const omitted = entries.length - rows.length;
  const note = md`${omitted} more ${omitted === 1 ? 'currency' : 'currencies'} not shown: too many for one Slack message`;
  return {
    text: fallbackText(md`${BALANCE_TITLE}: ${fundedSummary(entries)}`),
    blocks: [
      header(BALANCE_TITLE),
      ...fieldSections(rows),
      omitted === 0 ? context(readLine) : context(readLine, note),
    ],
  };
}
