import type { StoredBalance } from '../domain/balance.js';
import { Amount } from '../payments/index.js';
import { cut } from '../text.js';
import { esc, join, type Mrkdwn, md } from './mrkdwn.js';

/**
 * Charts of the feed's kept readings (Slack's `data_visualization` block, docs/slack.md#charts-and-tables).
 * One coin per chart, so one unit on its axis and never a conversion the service did not give;
 * one point per period, so a week of one-minute readings is a handful of points. A chart's values
 * are JSON numbers Slack draws with, never read by anyone: every figure it shows is also written,
 * digit for digit, in the message's text (`chartFigures`), which is what notifications, screen
 * readers and clients that draw no chart get.
 */

/** Slack's limits this module keeps (docs/slack.md#charts-and-tables). */
export const CHART_LIMITS = {
  /** Charts in one message. */
  perMessage: 2,
  /** Points in one series. */
  points: 20,
  title: 50,
  /** A series name, a category and a point's label. */
  label: 20,
  axisLabel: 50,
} as const;

/** A `data_visualization` block with a line chart (`@slack/types` has no type for it yet). */
export interface ChartBlock {
  type: 'data_visualization';
  title: string;
  chart: {
    type: 'line';
    series: { name: string; data: { label: string; value: number }[] }[];
    axis_config: { categories: string[]; x_label?: string; y_label?: string };
  };
}

/** A reading as the chart reads it: the store's number for it, when it was taken and the balances. */
export interface KeptReading {
  id: number;
  takenAt: number;
  balances: StoredBalance;
}

/** One point of a coin's line: the period's label and the balance at its end, exact. */
export interface TrendPoint {
  label: string;
  at: number;
  balance: Amount;
}

export interface CoinTrend {
  id: string;
  points: TrendPoint[];
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** `Nov 21`: a short label, in UTC (the axis says so). */
const dayLabel = (at: number) => {
  const d = new Date(at);
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
};

/**
 * The moments a week's chart has a point at: `now` and the same time on each of the `days` days
 * before, oldest first. The store reads the one reading in force at each (queries-history.ts).
 */
export function pointTimes(now: number, days: number): number[] {
  const times: number[] = [];
  for (let k = days; k >= 0; k -= 1) times.push(now - k * 86_400_000);
  return times;
}

/**
 * Each coin's line through the readings in force at `times` (one reading a point, or none before
 * the feed's first): a point where the reading has no such coin is 0, as the digest counts it;
 * a time before the first reading has no point at all, never a made-up zero.
 */
export function coinTrends(
  times: readonly number[],
  inForce: readonly (KeptReading | undefined)[],
): CoinTrend[] {
  const ids = new Set<string>();
  for (const r of inForce) if (r) for (const id of Object.keys(r.balances)) ids.add(id);
  return [...ids].map((id) => ({
    id,
    points: times.flatMap((at, i) => {
      const reading = inForce[i];
      if (!reading) return [];
      const stored = reading.balances[id];
      const balance = (stored && Amount.parse(stored.balance)) ?? Amount.ZERO;
      return [{ label: dayLabel(at), at, balance }];
    }),
  }));
}

/**
 * How much a coin moved over its points, relative to its size: (highest − lowest) / largest
 * magnitude. Unit-free, so coins of different units can be ranked; only for ranking, never shown.
 * No values or all zero: 0 (the largest magnitude of none is −Infinity). Always finite: an amount
 * has at most MAX_AMOUNT_LENGTH (200) characters, so its number is below 1e201.
 */
export function relativeMove(values: readonly Amount[]): number {
  const numbers = values.map((v) => Number(v.toString()));
  const high = Math.max(...numbers);
  const low = Math.min(...numbers);
  const size = Math.max(...numbers.map(Math.abs));
  return size > 0 ? (high - low) / size : 0;
}

/**
 * The coins that moved most over their points, most first, ties by id; those that did not move are
 * left out, and so is any with a single point (one value has not moved).
 */
export function mostMoved(trends: readonly CoinTrend[], count: number): CoinTrend[] {
  return trends
    .map((t) => ({ t, move: relativeMove(t.points.map((p) => p.balance)) }))
    .filter(({ move }) => move > 0)
    .sort((a, b) => b.move - a.move || (a.t.id < b.t.id ? -1 : 1))
    .slice(0, count)
    .map(({ t }) => t);
}

/** Control characters and line or paragraph separators: a one-line label shows none. */
const CONTROLS = /[\p{Cc}\u2028\u2029]/gu;

/**
 * A chart's title or label as Slack draws it, plain text: what came from outside as it is (no
 * entities: `A&B` reads `A&B`), control characters made spaces, cut to `max` on a grapheme with
 * "…", never empty.
 */
function plainLabel(raw: string, max: number): string {
  const text = raw.replace(CONTROLS, ' ').replace(/\s+/g, ' ').trim();
  if (text === '') return '—';
  return text.length <= max ? text : `${cut(text, max - 1).trimEnd()}…`;
}

/** A coin's line chart: one series, its unit on the y axis, a label a point. */
export function trendChart(trend: CoinTrend, days: number): ChartBlock {
  const points = trend.points.slice(-CHART_LIMITS.points);
  const name = plainLabel(trend.id, CHART_LIMITS.label);
  return {
    type: 'data_visualization',
    title: plainLabel(`${trend.id} balance, last ${days} days`, CHART_LIMITS.title),
    chart: {
      type: 'line',
      series: [{ name, data: points.map((p) => ({ label: p.label, value: Number(p.balance.toString()) })) }],
      axis_config: {
        categories: points.map((p) => p.label),
        x_label: 'Day (UTC)',
        y_label: plainLabel(trend.id, CHART_LIMITS.axisLabel),
      },
    },
  };
}

/** "BTC over 7 days: Nov 14 0.5, …, Nov 21 0.6": a chart's figures, exact, for the message's text. */
export function chartFigures(trend: CoinTrend, days: number): Mrkdwn {
  const points = trend.points.slice(-CHART_LIMITS.points);
  return md`${esc(trend.id, 40)} over ${days} days: ${join(
    points.map((p) => md`${p.label} ${p.balance.toString()}`),
    ', ',
  )}`;
}
