import Big from 'big.js';
import type { StoredBalance } from '../domain/balance.js';
import { balanceChanges } from '../feed/deltas.js';
import { digestOf, feedQueries } from '../feed/queries.js';
import { openStore, type Store } from '../store/database.js';
import { ONE_WORKSPACE } from '../store/keys.js';

/**
 * The demo's sample balance history (demo code only; nothing in production writes it). A feed
 * turned on in the demo has no week of readings, so the digest would never show a chart: the
 * demo's store starts with a made-up week that ends at the sandbox's starting balances, written
 * with the feed's own queries (`balance_history` and `feed_changes`) before the bot first opens
 * the store. The page says that this history is sample data.
 */

const DAY_MS = 24 * 3_600_000;

/**
 * Each coin's balance 7, 6, … 1 days ago, as a share of today's: coins take turns rising to
 * today's balance and falling to it, so the coins move by different amounts and the digest has
 * some to pick from. A coin at 0 stays at 0.
 */
const SHARES: readonly (readonly string[])[] = [
  ['0.35', '0.5', '0.46', '0.72', '0.8', '0.77', '0.94'],
  ['1.6', '1.45', '1.5', '1.3', '1.22', '1.25', '1.05'],
];

/** `balance` × `share`, exact (a share has two decimals at most): digits, never an exponent. */
const scaled = (balance: string, share: string): string => new Big(balance).times(share).toFixed();

export interface SampleReading {
  takenAt: number;
  balances: StoredBalance;
}

/**
 * A week of sample readings ending at `today` (a reading each day, an hour before each of the
 * digest's daily points, and one an hour before `now` that is `today` itself), oldest first.
 */
export function sampleWeek(today: StoredBalance, now: number): SampleReading[] {
  const coins = Object.entries(today);
  const days = SHARES[0]?.length ?? 0;
  const readings: SampleReading[] = [];
  for (let day = 0; day < days; day += 1) {
    const balances: StoredBalance = {};
    coins.forEach(([id, { title, balance }], i) => {
      const share = SHARES[i % SHARES.length]?.[day] ?? '1';
      balances[id] = { title, balance: scaled(balance, share) };
    });
    readings.push({ takenAt: now - (days - day) * DAY_MS - 3_600_000, balances });
  }
  readings.push({ takenAt: now - 3_600_000, balances: today });
  return readings;
}

/**
 * Writes the sample week into an empty store, each reading with the rises and falls it made, as
 * the feed's poll writes them; a store that keeps readings already is left alone.
 */
export async function seedSampleHistory(store: Store, today: StoredBalance, now: number): Promise<number> {
  const queries = feedQueries(store, ONE_WORKSPACE);
  return store.transaction(async (trx) => {
    if (await queries.latestReading(trx)) return 0;
    let before: StoredBalance | undefined;
    const week = sampleWeek(today, now);
    for (const reading of week) {
      await queries.insertReading(trx, reading.takenAt, reading.balances);
      const changes = before ? balanceChanges(before, reading.balances) : [];
      if (changes.length > 0) await queries.insertChanges(trx, reading.takenAt, changes);
      before = reading.balances;
    }
    return week.length;
  });
}

/**
 * Makes every active feed's digest due at `now`, at its own time of day still (the feed's own
 * `moveDigest`, which also drops any lease on it); how many feeds there were.
 */
export async function makeDigestsDue(store: Store, now: number): Promise<number> {
  const queries = feedQueries(store, ONE_WORKSPACE);
  return store.transaction(async (trx) => {
    const feeds = await queries.active(trx);
    for (const feed of feeds) await queries.moveDigest(trx, feed.id, digestOf(feed), now);
    return feeds.length;
  });
}

/** Opens the bot's SQLite file (only while the bot is stopped: it holds the file), runs `work`, closes it. */
export async function withStoreFile<T>(path: string, work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore({ kind: 'sqlite', path });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}
