import { describe, expect, it } from 'vitest';
import { coinTrends, mostMoved, pointTimes, trendChart } from '../../src/views/charts.js';
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
  it('keeps its title, name and labels within Slack’s limits and escaped, whatever the coin is called', () => {
    const id = `<!channel> & ${'x'.repeat(80)}`;
    const [trend] = week((k) => ({ [id]: `${k}` }));
    if (!trend) throw new Error('no trend');
    const chart = trendChart(trend, 7);
    expect(blockKitProblems({ text: 'digest', blocks: [chart] })).toEqual([]);
    expect(chart.title).toBe(`&lt;!channel&gt; &amp; ${'x'.repeat(26)}…`);
    // Cut before an entity, never inside one.
    expect(chart.chart.series[0]?.name).toBe('&lt;!channel&gt;…');
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
});
