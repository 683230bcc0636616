import type { BalanceEntry } from '../payments/index.js';
import { context, fallbackText, fieldSections, header, LIMITS, type Message, section } from './blocks.js';
import { exactList, foldedZeros, grouped } from './figures.js';
import { esc, type Mrkdwn, md, slackDate } from './mrkdwn.js';

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

/**
 * A currency's row: its title, then the amount as plain text (copyable, never red code), grouped
 * for reading with every digit kept, and its id.
 */
const row = (e: BalanceEntry): Mrkdwn =>
  md`*${esc(e.title, MAX_TITLE)}*\n${grouped(e.balance)} ${esc(e.id, MAX_ID)}`;

/**
 * The rows of the funded currencies that fit in one message, in order; building stops as soon as
 * the next one would not fit, so a service listing 20,000 currencies costs no more than one that
 * lists a few hundred.
 */
function fittingRows(funded: readonly BalanceEntry[]): Mrkdwn[] {
  const rows: Mrkdwn[] = [];
  let chars = RESERVED_CHARS;
  for (const entry of funded) {
    const next = row(entry);
    chars += next.text.length + FIELD_OVERHEAD;
    if (chars > LIMITS.messageChars) break;
    rows.push(next);
  }
  return rows;
}

/**
 * The merchant's balance: one row per funded currency (title, id, amount grouped for reading),
 * the currencies at 0 folded into one "and 5 more at 0", then when it was read. Rows that cannot
 * fit in one Slack message (12,000 characters) are counted and the count is shown, never dropped
 * silently.
 */
export function balanceMessage(entries: readonly BalanceEntry[], readAt: Date): Message {
  const readLine = md`Total across all projects · read ${slackDate(readAt)}`;
  if (entries.length === 0) {
    return {
      text: fallbackText(md`${BALANCE_TITLE}: ${NO_BALANCES}`),
      blocks: [header(BALANCE_TITLE), section(md`${NO_BALANCES}`), context(readLine)],
    };
  }

  const funded = entries.filter((e) => !e.balance.isZero());
  const rows = fittingRows(funded);
  const omitted = funded.length - rows.length;
  const zeros = entries.length - funded.length;
  const notes = [readLine];
  if (omitted > 0)
    notes.push(
      md`${omitted} more ${omitted === 1 ? 'currency' : 'currencies'} not shown: too many for one Slack message`,
    );
  if (zeros > 0) notes.push(foldedZeros(zeros, rows.length > 0));
  return {
    text: fallbackText(
      md`${BALANCE_TITLE}: ${
        funded.length === 0
          ? md`all zero`
          : exactList(
              funded.map((e) => [e.id, e.balance] as const),
              LIMITS.topLevelText,
            )
      }`,
    ),
    blocks: [
      header(BALANCE_TITLE),
      ...(rows.length === 0 ? [section(md`No currency holds funds yet.`)] : fieldSections(rows)),
      context(...notes),
    ],
  };
}
