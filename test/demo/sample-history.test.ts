import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  makeDigestsDue,
  sampleWeek,
  seedSampleHistory,
  withStoreFile,
} from '../../src/demo/sample-history.js';
import type { StoredBalance } from '../../src/domain/balance.js';
import { feedQueries } from '../../src/feed/queries.js';
import { ONE_WORKSPACE } from '../../src/store/keys.js';
import {
  clock,
  digestsIn,
  env,
  instance,
  poster,
  request,
  T0,
  useFeedService,
} from '../feed/feed-service-setup.js';

/**
 * The demo's sample week of balance readings: written with the feed's own queries before the bot
 * opens its store, it gives the real digest job a week to chart the moment a feed is turned on.
 */

useFeedService();

const DAY = 86_400_000;
/** The feed-service set-up's sandbox balances, as a reading stores them. */
const TODAY: StoredBalance = {
  BTC: { title: 'Bitcoin', balance: '0.0012' },
  'USDT-TRC20': { title: 'Tether <TRC-20>', balance: '1.5' },
};
type Chart = { type: string; title: string; chart: { series: { data: { value: number }[] }[] } };
const chartsOf = (blocks: readonly unknown[]) =>
  blocks.filter((b): b is Chart => (b as { type: string }).type === 'data_visualization');

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the demo’s sample week', () => {
  it('is a reading a day for a week, ending at today’s balances, every amount exact', () => {
    const week = sampleWeek(
      { ...TODAY, LTC: { title: 'Litecoin', balance: '0.0000001' }, ETH: { title: 'Ether', balance: '0' } },
      T0,
    );
    expect(week.map((r) => (T0 - r.takenAt) / 3_600_000)).toEqual([169, 145, 121, 97, 73, 49, 25, 1]);
    expect(week.at(-1)?.balances.BTC?.balance).toBe('0.0012');
    // 0.0012 × 0.35, × 0.5, … exactly: more decimals than today's, none lost.
    expect(week.map((r) => r.balances.BTC?.balance)).toEqual([
      '0.00042',
      '0.0006',
      '0.000552',
      '0.000864',
      '0.00096',
      '0.000924',
      '0.001128',
      '0.0012',
    ]);
    expect(week[0]?.balances['USDT-TRC20']?.balance).toBe('2.4');
    // Never an exponent ("1e-7"), a coin at 0 stays at 0.
    for (const r of week) {
      expect(r.balances.LTC?.balance).toMatch(/^0\.0{6,7}\d{1,2}$/);
      expect(r.balances.ETH?.balance).toBe('0');
    }
  });

  it('turned on in the demo, a feed’s digest made due now is posted at once by the digest job, with charts of the week', async () => {
    await seedSampleHistory(env.store, TODAY, clock.now);
    const { feed, tick } = instance('a', poster, clock);
    await feed.subscribe(request());
    clock.now += 60_000;
    await tick();
    expect(digestsIn()).toEqual([]); // 09:00 is still an hour away

    expect(await makeDigestsDue(env.store, clock.now)).toBe(1);
    await tick();
    const digest = digestsIn().at(-1);
    const charts = chartsOf(digest?.blocks ?? []);
    expect(charts.map((c) => c.title)).toEqual([
      'BTC balance, last 7 days',
      'USDT-TRC20 balance, last 7 days',
    ]);
    // Eight daily points, the last one today's real balance.
    expect(charts[0]?.chart.series[0]?.data.map((d) => d.value)).toEqual([
      0.00042, 0.0006, 0.000552, 0.000864, 0.00096, 0.000924, 0.001128, 0.0012,
    ]);
    expect(digest?.text).toContain('BTC over 7 days:');
    expect(poster.problems).toEqual([]);
    // Once posted, the digest is due again at its own time of day (09:00, later today).
    const [sub] = await feedQueries(env.store, ONE_WORKSPACE).active(env.store.db);
    expect(sub?.next_digest_at).toBe(Date.parse('2026-11-21T09:00:00Z'));
  });

  it('is written into an empty store only: a store that keeps readings already is left as it is', async () => {
    expect(await seedSampleHistory(env.store, TODAY, T0)).toBe(8);
    expect(await seedSampleHistory(env.store, TODAY, T0 + DAY)).toBe(0);
    const rows = await env.store.db.selectFrom('balance_history').select('taken_at').execute();
    expect(rows).toHaveLength(8);
  });

  it('with no feed on, makes nothing due', async () => {
    expect(await makeDigestsDue(env.store, T0)).toBe(0);
  });

  it('opens the bot’s SQLite file, migrated, and lets go of it after, for the bot to take', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'demo-history-'));
    dirs.push(dir);
    const file = join(dir, 'bot.sqlite');
    expect(await withStoreFile(file, (store) => seedSampleHistory(store, TODAY, T0))).toBe(8);
    // Held no more: opened again at once, it keeps the week.
    const kept = await withStoreFile(file, (store) =>
      store.db.selectFrom('balance_history').select('balances').orderBy('id').execute(),
    );
    expect(kept.map((r) => JSON.parse(r.balances) as StoredBalance).at(-1)).toEqual(TODAY);
  });
});
