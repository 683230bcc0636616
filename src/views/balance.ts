import type { StoredBalance } from '../domain/balance.js';
import { Amount, type BalanceEntry } from '../payments/index.js';
import { context, fallbackText, fieldSections, header, LIMITS, type Message, section } from './blocks.js';
import { exactList, foldedZeros, grouped } from './figures.js';
import { esc, type Mrkdwn, md, slackDate } from './mrkdwn.js';
import { byMostMoved, coinTable, FIELDS_AT_MOST } from './tables.js';

export const BALANCE_TITLE = 'Balance across all projects';
export const NO_BALANCES =
  'Your account holds no cryptocurrency yet. Balances appear here once customers pay invoices in any of your projects.';

/** Longest currency title and id shown in a row; the amount is always shown whole. */
const MAX_TITLE = 80;
const MAX_ID = 40;

/**
 * A currency's row: its title, then the amount as plain text (copyable, never red code), grouped
 * for reading with every digit kept, and its id. Ten of them (one section) stay far below
 * Slack's 12,000 characters whatever the service sends: more are a table.
 */
const row = (e: BalanceEntry): Mrkdwn =>
  md`*${esc(e.title, MAX_TITLE)}*\n${grouped(e.balance)} ${esc(e.id, MAX_ID)}`;

/**
 * More funded currencies than one section of fields holds: one table of coin, balance and change
 * over 24 hours (against the feed's reading of a day before, when it has one), the coins that
 * moved most first.
 */
function balanceTable(funded: readonly BalanceEntry[], dayAgo: StoredBalance | undefined) {
  const was = (id: string) => Amount.parse(dayAgo?.[id]?.balance ?? '0') ?? Amount.ZERO;
  return coinTable(
    byMostMoved(
      funded.map((e) => ({
        id: e.id,
        balance: e.balance,
        change: dayAgo === undefined ? undefined : e.balance.minus(was(e.id)),
      })),
    ),
  );
}

/**
 * The merchant's balance: one row per funded currency (title, id, amount grouped for reading),
 * or one table when they are more than one section of fields holds; the currencies at 0 folded
 * into one "and 5 more at 0", then when it was read. Rows that cannot fit in one Slack message
 * are counted and the count is shown, never dropped silently. `dayAgo` is the feed's reading of
 * 24 hours before, when there is one, for the table's change column.
 */
export function balanceMessage(
  entries: readonly BalanceEntry[],
  readAt: Date,
  dayAgo?: StoredBalance,
): Message {
  const readLine = md`Total across all projects · read ${slackDate(readAt)}`;
  if (entries.length === 0) {
    return {
      text: fallbackText(md`${BALANCE_TITLE}: ${NO_BALANCES}`),
      blocks: [header(BALANCE_TITLE), section(md`${NO_BALANCES}`), context(readLine)],
    };
  }

  const funded = entries.filter((e) => !e.balance.isZero());
  const table = funded.length > FIELDS_AT_MOST ? balanceTable(funded, dayAgo) : undefined;
  const rows = table ? [] : funded.map(row);
  const omitted = table?.omitted ?? 0;
  const zeros = entries.length - funded.length;
  const notes = [readLine];
  if (omitted > 0)
    notes.push(
      md`${omitted} more ${omitted === 1 ? 'currency' : 'currencies'} not shown: too many for one Slack message`,
    );
  if (zeros > 0) notes.push(foldedZeros(zeros, funded.length > 0));
  return {
    text: fallbackText(
      md`${BALANCE_TITLE}: ${
        funded.length === 0
          ? md`all zero`
          : exactList(
              funded.map((e) => [e.id, e.balance] as const),
              LIMITS.topLevelText - BALANCE_TITLE.length - 2,
            )
      }`,
    ),
    blocks: [
      header(BALANCE_TITLE),
      ...(funded.length === 0 ? [section(md`No currency holds funds yet.`)] : fieldSections(rows)),
      context(...notes),
    ],
    ...(table ? { attachments: [table.attachment] } : {}),
  };
}
