/**
 * The "digest" scenario of `npm run bench` (issue 40): a digest with charts for 60 coins and
 * 11,520 readings each (8 days at a one-minute poll) kept in SQLite, as the digest job reads and
 * renders it: the week's readings in force, one a day (`readingsAt`, one statement), then the
 * message (`digestMessage`: two charts, the 60 coins in a table, the exact figures in its text).
 * Prints the median of BENCH_DIGEST_RUNS (default 20) reads and renders, and the statements one
 * read sends. test/feed/digest-charts.test.ts checks the same message is valid and exact.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { historyQueries } from '../src/feed/queries-history.js';
import { openStore } from '../src/store/database.js';
import { ONE_WORKSPACE } from '../src/store/keys.js';
import { coinTrends, pointTimes } from '../src/views/charts.js';
import { TREND_DAYS } from '../src/views/digest-charts.js';
import { digestMessage } from '../src/views/feed.js';
import { round } from './lib.js';

export interface DigestResult {
  coins: number;
  readings: number;
  /** Median time to read the week's readings in force, in ms. */
  readMs: number;
  /** Statements one read sends. */
  readStatements: number;
  /** Median time to render the digest from them, in ms. */
  renderMs: number;
  /** Characters of the message's text and blocks, for scale. */
  messageChars: number;
}

const COINS = 60;
const READINGS = 8 * 24 * 60;
const DAY = 86_400_000;

/** A reading where every coin moved: long, negative and tiny amounts among them. */
const reading = (minute: number) =>
  JSON.stringify(
    Object.fromEntries(
      Array.from({ length: COINS }, (_, c) => [
        `COIN${c}`,
        {
          title: `Coin ${c}`,
          balance:
            c % 3 === 0
              ? `-98765432109876543${minute}.123456789012345678`
              : c % 3 === 1
                ? `0.0000000000${minute + 1}`
                : `${minute * c}.5`,
        },
      ]),
    ),
  );

const median = (values: number[]) =>
  round([...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0, 2);

export async function digestScenario(runs = 20): Promise<DigestResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-digest-'));
  const store = await openStore({ kind: 'sqlite', path: join(dir, 'bot.sqlite') });
  try {
    const start = Date.parse('2026-11-13T09:00:00Z');
    for (let first = 0; first < READINGS; first += 500) {
      const rows = Array.from({ length: Math.min(500, READINGS - first) }, (_, k) => ({
        taken_at: start + (first + k) * 60_000,
        balances: reading(first + k),
      }));
      await store.db.insertInto('balance_history').values(rows).execute();
    }
    const now = start + READINGS * 60_000;
    const history = historyQueries(ONE_WORKSPACE);
    const times = pointTimes(now, TREND_DAYS);
    const reads: number[] = [];
    const renders: number[] = [];
    let readStatements = 0;
    let messageChars = 0;
    for (let i = 0; i < runs; i += 1) {
      const sent = store.statements();
      const readStarted = performance.now();
      const inForce = await history.readingsAt(store.db, times);
      reads.push(performance.now() - readStarted);
      readStatements = store.statements() - sent;
      const latest = inForce.at(-1);
      const dayAgo = inForce.at(-2);
      if (!latest || !dayAgo) throw new Error('no readings');
      const renderStarted = performance.now();
      const message = digestMessage({
        balances: latest.balances,
        asOf: new Date(now),
        before: dayAgo.balances,
        beforeAt: new Date(now - DAY),
        rises: COINS,
        falls: 0,
        trends: coinTrends(times, inForce),
      });
      renders.push(performance.now() - renderStarted);
      messageChars = JSON.stringify(message).length;
    }
    return {
      coins: COINS,
      readings: READINGS,
      readMs: median(reads),
      readStatements,
      renderMs: median(renders),
      messageChars,
    };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
