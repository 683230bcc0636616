import type { KnownBlock } from '@slack/types';
import type { BalanceEntry } from '../payments/index.js';
import {
  blockChars,
  context,
  fallbackText,
  fieldSections,
  header,
  LIMITS,
  type Message,
  section,
} from './blocks.js';
import { esc, join, md, slackDate } from './mrkdwn.js';

export const BALANCE_TITLE = 'Balance across all projects';
export const NO_BALANCES =
  'Your account holds no cryptocurrency yet. Balances appear here once customers pay invoices in any of your projects.';

/** Longest currency title and id shown in a row; the amount is always shown whole. */
const MAX_TITLE = 80;
const MAX_ID = 40;

/**
 * The merchant's balance: one row per currency (title, id, exact amount), non-zero balances
 * first and zero ones after them, then when it was read. Rows that cannot fit in one Slack
 * message (50 blocks, 12,000 characters) are counted and the count is shown, never dropped silently.
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
  const ordered = [...funded, ...entries.filter((e) => e.balance.isZero())];
  const rows = ordered.map(
    (e) => md`*${esc(e.title, MAX_TITLE)}*\n\`${e.balance.toString()}\` ${esc(e.id, MAX_ID)}`,
  );

  // Room for the header, the context line (with an "N more" note) and some slack for JSON keys.
  const head = header(BALANCE_TITLE);
  const reserveChars = blockChars(head) + 600;
  const maxRows = (LIMITS.blocks - 2) * LIMITS.fields;
  let shown = 0;
  let chars = reserveChars;
  for (const row of rows) {
    const cost = row.text.length + 30; // the field's own JSON keys and type
    if (shown === maxRows || chars + cost > LIMITS.messageChars) break;
    chars += cost;
    shown += 1;
  }
  const omitted = rows.length - shown;

  const blocks: KnownBlock[] = [head, ...fieldSections(rows.slice(0, shown))];
  blocks.push(
    omitted === 0
      ? context(readLine)
      : context(
          readLine,
          md`${omitted} more ${omitted === 1 ? 'currency' : 'currencies'} not shown: too many for one Slack message`,
        ),
  );

  const summary = funded.map((e) => md`${e.balance.toString()} ${esc(e.id, MAX_ID)}`);
  const nonZero = summary.length === 0 ? md`all zero` : join(summary, ', ');
  return { text: fallbackText(md`${BALANCE_TITLE}: ${nonZero}`), blocks };
}
