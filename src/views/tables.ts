import type { MessageAttachment, TableBlock } from '@slack/types';
import type { Amount } from '../payments/index.js';
import { cut } from '../text.js';
import { relativeMove } from './charts.js';
import { grouped, signed } from './figures.js';

/**
 * Many coins as one `table` block (docs/slack.md#charts-and-tables): it goes in the message's
 * attachments, one a message; Slack takes at most 100 rows, 20 cells a row and 10,000 characters
 * across all cells, none empty. Amounts are grouped for reading with every digit kept, right
 * aligned so the digits line up, and the coins that moved most come first.
 */

const TABLE_LIMITS = { rows: 100, chars: 10_000 } as const;

/** More coins than this are a table; as many or fewer stay section fields (one section's worth). */
export const FIELDS_AT_MOST = 10;

/** A coin's row: its balance and, when the feed can tell, its change over 24 hours. */
export interface CoinRow {
  id: string;
  balance: Amount;
  /** `undefined` when there is no reading a day before to compare with. */
  change: Amount | undefined;
}

const MAX_ID = 40;
const NO_CHANGE_KNOWN = '—';

/** How much a row moved, relative to its size: its change against the larger of before and after. */
const moved = (row: CoinRow): number =>
  row.change === undefined ? 0 : relativeMove([row.balance, row.balance.minus(row.change)]);

/**
 * The rows, the one that moved most first; rows that moved alike (or did not move) keep their order,
 * as `Array.prototype.sort` is stable.
 */
export function byMostMoved<T extends CoinRow>(rows: readonly T[]): T[] {
  return rows
    .map((row) => ({ row, move: moved(row) }))
    .sort((a, b) => b.move - a.move)
    .map(({ row }) => row);
}

const cell = (text: string) => ({ type: 'raw_text' as const, text: text === '' ? NO_CHANGE_KNOWN : text });

/**
 * The rows as a table attachment, header first, as many as fit Slack's limits in order; the rest
 * are counted, never dropped silently.
 */
export function coinTable(
  rows: readonly CoinRow[],
  /** What the change column covers. */
  span = 'in 24 h',
): { attachment: MessageAttachment; omitted: number } {
  const header = ['Coin', 'Balance', `Change ${span}`];
  const table: string[][] = [header];
  let chars = header.join('').length;
  for (const row of rows) {
    const cells = [
      cut(row.id, MAX_ID),
      grouped(row.balance),
      row.change === undefined ? NO_CHANGE_KNOWN : signed(row.change, grouped),
    ];
    const size = cells.join('').length;
    if (table.length >= TABLE_LIMITS.rows || chars + size > TABLE_LIMITS.chars) break;
    table.push(cells);
    chars += size;
  }
  const block: TableBlock = {
    type: 'table',
    column_settings: [{ align: 'left' }, { align: 'right' }, { align: 'right' }],
    rows: table.map((cells) => cells.map(cell)),
  };
  return { attachment: { blocks: [block] }, omitted: rows.length - (table.length - 1) };
}
