import { describe, expect, it } from 'vitest';
import { Amount } from '../../src/payments/index.js';
import { num } from '../../src/sandbox/data.js';
import { type CoinTrend, chartFigures } from '../../src/views/charts.js';
import { digestTable, TREND_DAYS, trendCharts } from '../../src/views/digest-charts.js';
import { tableRows } from '../support/block-kit-charts.js';
import { feedJobsOf } from '../support/jobs.js';
import { clock, digestsIn, env, instance, poster, request, useFeedService } from './feed-service-setup.js';

/** The digest's charts: how the coins that moved most changed over the week, from the kept readings. */

useFeedService();

const DAY = 86_400_000;
const balances = (btc: string, usdt: string, doge: string) => [
  { id: 'BTC', title: 'Bitcoin', balance: num(btc) },
  { id: 'USDT-TRC20', title: 'Tether', balance: num(usdt) },
  { id: 'ETH', title: 'Ether', balance: num('2') },
  { id: 'DOGE', title: 'Dogecoin', balance: num(doge) },
];
type Chart = {
  type: string;
  title: string;
  chart: { series: { name: string; data: { label: string; value: number }[] }[]; axis_config: unknown };
};
const chartsOf = (message: { blocks: unknown[] } | undefined) =>
  (message?.blocks ?? []).filter((b): b is Chart => (b as { type: string }).type === 'data_visualization');

describe('the digest’s charts', () => {
  it('show the two coins that moved most over the week, one coin a chart, their figures exact in the text', async () => {
    env.sandbox.setBalances(balances('0.0012', '1.5', '1234567.80'));
    const { feed, tick } = instance('a', poster, clock);
    await feed.subscribe(request());
    for (let d = 1; d <= 7; d += 1) {
      clock.now = Date.parse('2026-11-21T06:00:00Z') + d * DAY;
      env.sandbox.setBalances(balances(`0.00${d}`, `${100 + d}`, `1234567.8${d}`));
      await tick();
    }
    clock.now = Date.parse('2026-11-28T09:00:00Z');
    await tick();
    const digest = digestsIn().at(-1);
    const charts = chartsOf(digest);
    expect(charts.map((c) => c.title)).toEqual([
      'USDT-TRC20 balance, last 7 days',
      'BTC balance, last 7 days',
    ]);
    expect(charts[1]?.chart.series).toEqual([
      {
        name: 'BTC',
        data: [
          { label: 'Nov 21', value: 0.0012 },
          ...[1, 2, 3, 4, 5, 6, 7].map((d) => ({ label: `Nov ${21 + d}`, value: d / 1000 })),
        ],
      },
    ]);
    expect(digest?.text).toContain(
      'USDT-TRC20 over 7 days: Nov 21 1.5, Nov 22 101, Nov 23 102, Nov 24 103, Nov 25 104, Nov 26 105, Nov 27 106, Nov 28 107. ' +
        'BTC over 7 days: Nov 21 0.0012, Nov 22 0.001, Nov 23 0.002, Nov 24 0.003, Nov 25 0.004, Nov 26 0.005, Nov 27 0.006, Nov 28 0.007.',
    );
    expect(poster.problems).toEqual([]);
  });

  it('draws none when nothing moved, and never invents points before the feed began', async () => {
    const { feed, tick } = instance('a', poster, clock);
    await feed.subscribe(request());
    clock.now = Date.parse('2026-11-21T09:00:00Z');
    await tick();
    expect(chartsOf(digestsIn().at(-1))).toEqual([]);
    env.sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num('0.5') }]);
    clock.now = Date.parse('2026-11-22T06:00:00Z');
    await tick();
    clock.now = Date.parse('2026-11-22T09:00:00Z');
    await tick();
    // Two readings in force (Nov 21 and Nov 22): two points, not eight with zeros before them.
    expect(chartsOf(digestsIn().at(-1)).map((c) => c.chart.series)).toEqual([
      [
        {
          name: 'USDT-TRC20',
          data: [
            { label: 'Nov 21', value: 1.5 },
            { label: 'Nov 22', value: 0 },
          ],
        },
      ],
      [
        {
          name: 'BTC',
          data: [
            { label: 'Nov 21', value: 0.0012 },
            { label: 'Nov 22', value: 0.5 },
          ],
        },
      ],
    ]);
  });
});

describe('a digest over 60 coins and 8 days of one-minute readings', () => {
  const COINS = 60;
  const READINGS = 8 * 24 * 60;
  /** Eight days of readings up to the first digest, Nov 21 at 09:00. */
  const START = Date.parse('2026-11-13T09:00:00Z');
  /** Extreme amounts: 21 integer digits, 18 decimals, negative, tiny, and each reading different. */
  const amount = (coin: number, minute: number) =>
    coin % 3 === 0
      ? `${coin % 2 === 0 ? '-' : ''}987654321098765432${(minute % 1000).toString().padStart(3, '0')}.123456789012345678`
      : coin % 3 === 1
        ? `0.000000000000${(minute % 999_999) + 1}`
        : `${minute * coin}.5`;
  const reading = (minute: number) =>
    JSON.stringify(
      Object.fromEntries(
        Array.from({ length: COINS }, (_, c) => [
          `COIN${c}`,
          { title: `Coin ${c}`, balance: amount(c, minute) },
        ]),
      ),
    );

  it('is valid Block Kit within Slack’s limits, and every amount is in its text digit for digit', async () => {
    const { feed, deps, tick } = instance('a', poster, clock);
    await feed.subscribe(request());
    for (let first = 0; first < READINGS; first += 500) {
      const rows = Array.from({ length: Math.min(500, READINGS - first) }, (_, k) => ({
        taken_at: START + (first + k) * 60_000,
        balances: reading(first + k),
      }));
      await env.store.db.insertInto('balance_history').values(rows).execute();
    }
    const at = START + READINGS * 60_000;
    clock.now = at;
    const job = feedJobsOf(deps, feed).digest;
    const [sub] = await job.claim(at, 1);
    expect(sub && (await job.run(sub))).toEqual({ outcome: 'sent' });
    await tick();
    const digest = digestsIn().at(-1);
    expect(poster.problems).toEqual([]);
    expect(chartsOf(digest)).toHaveLength(2);
    // Sixty coins are one table (in the attachments), every row of it.
    const [table] = (digest?.attachments ?? []).flatMap((a) => a.blocks ?? []) as { rows: unknown[] }[];
    expect(table?.rows).toHaveLength(COINS + 1);
    const text = digest?.text ?? '';
    // Each chart's figures: the reading in force at each day's 09:00, exact.
    for (const chart of chartsOf(digest)) {
      const coin = Number(chart.chart.series[0]?.name.slice('COIN'.length));
      const minutes = [1, 2, 3, 4, 5, 6, 7, 8].map((d) => Math.min(READINGS - 1, d * 1440));
      const days = chart.chart.series[0]?.data.map((p) => p.label) ?? [];
      expect(days).toEqual(['Nov 14', 'Nov 15', 'Nov 16', 'Nov 17', 'Nov 18', 'Nov 19', 'Nov 20', 'Nov 21']);
      const exact = days.map((label, i) => `${label} ${amount(coin, minutes[i] ?? 0)}`);
      expect(text).toContain(`COIN${coin} over 7 days: ${exact.join(', ')}.`);
    }
    // Each balance the text lists is the last reading's, exact.
    const listed = [...text.slice(text.indexOf('Balances: ')).matchAll(/(-?[\d.]+) (COIN\d+)/g)];
    expect(listed.length).toBeGreaterThan(10);
    for (const [, figure, coin] of listed) expect(figure).toBe(amount(Number(coin?.slice(4)), READINGS - 1));
  });
});

const amount = (text: string) => Amount.parse(text) ?? Amount.ZERO;
/** A week's line of `id` through `values`, a point a day. */
const line = (id: string, values: string[]): CoinTrend => ({
  id,
  points: values.map((v, i) => ({ label: `Nov ${21 + i}`, at: i, balance: amount(v) })),
});

describe('the digest’s charts in the room its text leaves', () => {
  const usdt = line('USDT', ['100', '50', '10']); // moved most
  const btc = line('BTC', ['1', '1.5', '1.2']);
  const first = chartFigures(usdt, TREND_DAYS).text.length + 2;
  const second = chartFigures(btc, TREND_DAYS).text.length + 2;
  const drawn = (maxChars: number) =>
    trendCharts([btc, usdt], maxChars).blocks.map((b) => b.chart.series[0]?.name);

  it('draws a chart only when its figures fit, separator included, to the character', () => {
    expect(drawn(first - 1)).toEqual([]);
    expect(drawn(first)).toEqual(['USDT']);
    expect(drawn(first + second - 1)).toEqual(['USDT']);
    expect(drawn(first + second)).toEqual(['USDT', 'BTC']);
    expect(trendCharts([btc, usdt], first + second).figures.text).toBe(
      `${chartFigures(usdt, TREND_DAYS).text}. ${chartFigures(btc, TREND_DAYS).text}`,
    );
  });

  it('writes the figures of exactly the charts it draws', () => {
    expect(trendCharts([btc, usdt], first + 1).figures.text).toBe(chartFigures(usdt, TREND_DAYS).text);
  });
});

describe('the digest’s per-coin table', () => {
  const row = (id: string, is: string, was = is) => ({ id, is: amount(is), was: amount(was) });
  const others = (n: number) => Array.from({ length: n }, (_, i) => row(`C${i}`, `${i + 1}`));
  const coinsOf = (rows: ReturnType<typeof row>[]) => {
    const table = digestTable(rows, '7 days');
    return table && tableRows({ attachments: [table.attachment] }).map((r) => r[0]);
  };

  it('is no table for ten coins, which fit as fields, and a table for eleven', () => {
    expect(coinsOf(others(10))).toBeUndefined();
    expect(coinsOf(others(11))).toEqual(['Coin', ...others(11).map((r) => r.id)]);
  });

  it('puts the coins that moved most first, a negative balance by its size, never a coin at 0 throughout', () => {
    const rows = [row('ZERO', '0'), ...others(9), row('BTC', '2', '1'), row('NEG', '-4', '-10')];
    expect(coinsOf(rows)).toEqual(['Coin', 'NEG', 'BTC', 'ZERO', ...others(9).map((r) => r.id)]);
  });
});
