import { describe, expect, it } from 'vitest';
import { Amount } from '../../src/payments/index.js';
import {
  type CoinTrend,
  chartFigures,
  coinTrends,
  mostMoved,
  pointTimes,
  trendChart,
} from '../../src/views/charts.js';
import { blockKitProblems } from '../support/block-kit.js';

/** A coin's week as a chart: within Slack's limits whatever the service names a coin, and the coins ranked by how much they moved. */

const NOW = Date.parse('2026-11-21T09:00:00Z');
const times = pointTimes(NOW, 7);
const week = (balances: (k: number) => Record<string, string>) =>
  coinTrends(
    times,
    times.map((at, k) => ({
      id: k,
      takenAt: at,
      balances: Object.fromEntries(
        Object.entries(balances(k)).map(([id, b]) => [id, { title: id, balance: b }]),
      ),
    })),
  );

describe('a coin’s chart', () => {
  it('keeps its title, name and labels plain text within Slack’s limits, as the coin is called, never as entities', () => {
    const id = `<!channel> & ${'x'.repeat(80)}`;
    const [trend] = week((k) => ({ [id]: `${k}` }));
    if (!trend) throw new Error('no trend');
    const chart = trendChart(trend, 7);
    expect(blockKitProblems({ text: 'digest', blocks: [chart] })).toEqual([]);
    expect(chart.title).toBe(`<!channel> & ${'x'.repeat(36)}…`);
    expect(chart.chart.series[0]?.name).toBe(`<!channel> & xxxxxx…`);
    expect(chart.chart.axis_config.y_label).toBe(`<!channel> & ${'x'.repeat(36)}…`);
  });

  it('shows `A&B` as `A&B`, with control characters made spaces, and the text’s figures still escaped', () => {
    const [trend] = week((k) => ({ 'A&B\u0000\n\u2028C': `${k}` }));
    if (!trend) throw new Error('no trend');
    const chart = trendChart(trend, 7);
    expect(blockKitProblems({ text: 'digest', blocks: [chart] })).toEqual([]);
    expect(chart.title).toBe('A&B C balance, last 7 days');
    expect(chart.chart.series[0]?.name).toBe('A&B C');
    expect(chart.chart.axis_config.y_label).toBe('A&B C');
    expect(chartFigures(trend, 7).text).toMatch(/^A&amp;B/);
  });

  it('ranks coins by how much they moved against their size, whatever their unit, and leaves out those that did not', () => {
    const trends = week((k) => ({
      SATS: `${1_000_000 + k}`, // moved 7 in a million
      BTC: `0.00${k + 1}`, // moved from 0.001 to 0.008
      ETH: '2', // did not move
      USDT: `${100 - k * 10}`, // 100 down to 30
    }));
    expect(mostMoved(trends, 3).map((t) => t.id)).toEqual(['BTC', 'USDT', 'SATS']);
  });

  it('leaves out a coin that did not move, one with a single reading, and one at 0 throughout, however many are asked for', () => {
    const trends = week((k) => ({ ETH: '2', ZERO: '0', BTC: `0.00${k + 1}` }));
    const single = coinTrends(
      [NOW],
      [{ id: 1, takenAt: NOW, balances: { DOGE: { title: 'D', balance: '5' } } }],
    );
    expect(mostMoved([...trends, ...single], 5).map((t) => t.id)).toEqual(['BTC']);
  });

  it('ranks coins that moved alike by their id, whatever order the feed listed them in', () => {
    const trends = week((k) => ({ USDT: `${k + 1}`, BTC: `${k + 1}`, ETH: `${k + 1}` }));
    expect(mostMoved(trends, 3).map((t) => t.id)).toEqual(['BTC', 'ETH', 'USDT']);
    expect(mostMoved([...trends].reverse(), 3).map((t) => t.id)).toEqual(['BTC', 'ETH', 'USDT']);
  });

  it('has a point at now and at the same time on each day before, oldest first', () => {
    expect(pointTimes(NOW, 2)).toEqual([NOW - 2 * 86_400_000, NOW - 86_400_000, NOW]);
  });

  it('labels each day with its month’s short name, in UTC', () => {
    const months = Array.from({ length: 12 }, (_, m) => Date.UTC(2026, m, 15, 23, 30));
    const [trend] = coinTrends(
      months,
      months.map((at, m) => ({ id: m, takenAt: at, balances: { BTC: { title: 'B', balance: `${m}` } } })),
    );
    if (!trend) throw new Error('no trend');
    expect(trendChart(trend, 365).chart.axis_config.categories).toEqual(
      ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'].map(
        (m) => `${m} 15`,
      ),
    );
  });

  it('draws and writes only the last 20 points of a longer line', () => {
    const trend: CoinTrend = {
      id: 'BTC',
      points: Array.from({ length: 25 }, (_, i) => ({
        label: `D${i}`,
        at: i,
        balance: Amount.parse(`${i}.5`) ?? Amount.ZERO,
      })),
    };
    const chart = trendChart(trend, 25);
    expect(blockKitProblems({ text: 'digest', blocks: [chart] })).toEqual([]);
    expect(chart.chart.axis_config.categories).toEqual(Array.from({ length: 20 }, (_, i) => `D${i + 5}`));
    expect(chart.chart.series[0]?.data[0]).toEqual({ label: 'D5', value: 5.5 });
    const last20 = Array.from({ length: 20 }, (_, i) => `D${i + 5} ${i + 5}.5`).join(', ');
    expect(chartFigures(trend, 25).text).toBe(`BTC over 25 days: ${last20}`);
  });
});
