import type { Amount } from '../payments/index.js';
import { appendWithin, type Message } from './blocks.js';
import {
  CHART_LIMITS,
  type ChartBlock,
  type CoinTrend,
  chartFigures,
  mostMoved,
  trendChart,
} from './charts.js';
import { join, type Mrkdwn } from './mrkdwn.js';
import { byMostMoved, type CoinRow, coinTable, FIELDS_AT_MOST } from './tables.js';

/** How far back the digest's charts look. */
export const TREND_DAYS = 7;

/**
 * The digest's charts: the coins that moved most over the week, one a chart, at most two. A
 * chart is drawn only when its figures fit in the `maxChars` of the message's text left for
 * them (`appendWithin`, which also keeps to Slack's charts a message), so every point a reader
 * sees in a chart is also in the text, digit for digit.
 */
export function trendCharts(
  trends: readonly CoinTrend[],
  maxChars: number,
): { blocks: ChartBlock[]; figures: Mrkdwn } {
  let drawn: Message = { text: '', blocks: [] };
  const blocks: ChartBlock[] = [];
  const figures: Mrkdwn[] = [];
  for (const trend of mostMoved(trends, CHART_LIMITS.perMessage)) {
    const figure = chartFigures(trend, TREND_DAYS);
    // Each figure with the ". " that follows it in the text.
    const chart = trendChart(trend, TREND_DAYS);
    const next = appendWithin(drawn, [{ blocks: [chart], text: `${figure.text}. ` }], maxChars);
    if (next === drawn) break;
    drawn = next;
    blocks.push(chart);
    figures.push(figure);
  }
  return { blocks, figures: join(figures, '. ') };
}

/**
 * The digest's per-coin list as a table when it is longer than one section of fields, sorted by
 * what moved most; `undefined` when fields still fit.
 */
export function digestTable(
  rows: readonly { id: string; is: Amount; was: Amount | undefined }[],
  /** What the change column covers: 'in 24 h', 'in 7 days' for a weekly digest, or since when. */
  span: string,
) {
  if (rows.length <= FIELDS_AT_MOST) return undefined;
  const coins: CoinRow[] = rows.map((r) => ({
    id: r.id,
    balance: r.is,
    change: r.was === undefined ? undefined : r.is.minus(r.was),
  }));
  return coinTable(byMostMoved(coins), span);
}
