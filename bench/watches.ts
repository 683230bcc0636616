/**
 * The watch scenario of `npm run bench`: many active watches polled for several minutes, with the
 * payment service answering in 20 ms. It measures what watching costs the service (calls per
 * watch per hour, against a naive fixed 30-second poll), the bot's CPU per check, its memory,
 * the database's size, how far behind the checks fall, and whether a person's /invoice waits
 * longer while the watches run.
 *
 * Options (environment): BENCH_WATCHES (default 10000), BENCH_WATCH_MINUTES (default 10),
 * BENCH_WATCH_RPS (budgets to try, default "5,50").
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openStore } from '../src/store/database.js';
import { nextPollAt } from '../src/watches/cadence.js';
import { cpuMs, load, round, rssMb, type Sandbox, startTarget } from './lib.js';

const HOME_TEAM = 'T0HOME';
const DAY = 86_400_000;
const WATCHED_PREFIX = '/api/v2/invoice/00000000-0000-4000-8000-';
const watchedId = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const INVOICE_LOAD = 1000;
const LOAD_C = 10;
/** A fixed 30-second poll: the naive choice. */
const NAIVE_CALLS_PER_WATCH_HOUR = 3600 / 30;

export interface WatchScenarioResult {
  watches: number;
  minutes: number;
  backgroundRps: number;
  callsPerWatchHour: number;
  naiveCallsPerWatchHour: number;
  checks: number;
  cpuPerCheckMs: number;
  rssMb: number;
  databaseMb: number;
  /** Checks due but not yet made at the end, and how late the oldest of them was. */
  dueAtEnd: number;
  oldestDueSeconds: number;
  invoiceReplyP99: { withoutWatches: number; withWatches: number; ratio: number };
}

/** Watches of every age up to a week, as a workspace that has watched for a while has them. */
async function populate(databaseUrl: string, count: number, now: number): Promise<void> {
  const store = await openStore({ kind: 'sqlite', path: databaseUrl.slice('file:'.length) });
  try {
    for (let start = 0; start < count; start += 500) {
      await store.transaction(async (trx) => {
        const rows = Array.from({ length: Math.min(500, count - start) }, (_, k) => start + k);
        const since = (i: number) => now - Math.floor((i / count) * 7 * DAY);
        await trx
          .insertInto('watches')
          .values(
            rows.map((i) => ({
              id: `bench-${i}`,
              team_id: HOME_TEAM,
              channel_id: `C${String(i % 100).padStart(4, '0')}`,
              invoice_id: watchedId(i),
              watcher_id: 'U0BENCH',
              card_ts: `1700000000.${i}`,
              thread_ts: `1700000000.${i}`,
              state: 'active' as const,
              started_at: since(i),
              ends_at: now + 7 * DAY,
              ended_at: null,
              end_reason: null,
            })),
          )
          .execute();
        await trx
          .insertInto('watched_invoices')
          .values(
            rows.map((i) => {
              const next = nextPollAt({
                now,
                since: since(i),
                timeout: Date.parse('2099-01-01'),
                pollSeconds: 30,
                failures: 0,
              });
              return {
                invoice_id: watchedId(i),
                snapshot: JSON.stringify({
                  id: watchedId(i),
                  status: 'open',
                  payStatus: 'none',
                  amount: '149.99',
                  timeout: '2099-01-01T00:00:00.000Z',
                  methods: ['USDT-TRC20', 'USDT-ERC20', 'BTC', 'ETH', 'LTC'],
                }),
                watched_since: since(i),
                // Spread over the first interval, as a running bot's checks are.
                next_poll_at: now + Math.floor(Math.random() * (next - now)),
                failures: 0,
                lease_owner: null,
                lease_until: null,
              };
            }),
          )
          .execute();
      });
    }
  } finally {
    await store.close();
  }
}

async function dueAt(databaseUrl: string, now: number) {
  const store = await openStore({ kind: 'sqlite', path: databaseUrl.slice('file:'.length) });
  try {
    const rows = await store.db
      .selectFrom('watched_invoices')
      .select('next_poll_at')
      .where('next_poll_at', '<', now)
      .execute();
    const oldest = Math.min(...rows.map((r) => r.next_poll_at), now);
    return { due: rows.length, oldestSeconds: round((now - oldest) / 1000) };
  } finally {
    await store.close();
  }
}

const invoiceOnly = (ids: readonly string[]) => {
  let i = 0;
  return (): ['/invoice', string] => {
    i += 1;
    return ['/invoice', ids[i % ids.length] ?? ''];
  };
};

async function invoiceP99(
  target: Awaited<ReturnType<typeof startTarget>>,
  sandbox: Sandbox,
): Promise<number> {
  await load(target, sandbox, 200, LOAD_C, invoiceOnly(sandbox.invoiceIds)); // warm-up
  const result = await load(target, sandbox, INVOICE_LOAD, LOAD_C, invoiceOnly(sandbox.invoiceIds));
  return result.reply.p99;
}

export async function watchScenario(
  sandbox: Sandbox,
  watches: number,
  minutes: number,
  rps: number,
): Promise<WatchScenarioResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bot-bench-watch-'));
  const databaseUrl = `file:${join(dir, 'bot.sqlite')}`;
  const env = { DATABASE_URL: databaseUrl, PAYMENT_API_BACKGROUND_RPS: String(rps) };
  try {
    await sandbox.setLatency(20);
    // Without watches.
    let target = await startTarget('bot', sandbox, undefined, env);
    const withoutWatches = await invoiceP99(target, sandbox);
    await target.pool.close();
    await target.bot.stop();
    await target.slack.close();

    // With them.
    const started = Date.now();
    await populate(databaseUrl, watches, started);
    target = await startTarget('bot', sandbox, undefined, env);
    await sandbox.reset();
    await sleep(15_000);
    const withWatches = await invoiceP99(target, sandbox);
    const cpuAfterLoad = cpuMs(target.bot.child.pid);
    const checksAfterLoad = await sandbox.requestCount(WATCHED_PREFIX);
    let peakRss = 0;
    const deadline = started + minutes * 60_000;
    while (Date.now() < deadline) {
      peakRss = Math.max(peakRss, rssMb(target.bot.child.pid));
      await sleep(1000);
    }
    const checks = await sandbox.requestCount(WATCHED_PREFIX);
    const cpuPerCheck = (cpuMs(target.bot.child.pid) - cpuAfterLoad) / Math.max(1, checks - checksAfterLoad);
    const elapsedHours = (Date.now() - started) / 3_600_000;
    await target.pool.close();
    await target.bot.stop();
    await target.slack.close();
    const { due, oldestSeconds } = await dueAt(databaseUrl, Date.now());
    const path = databaseUrl.slice('file:'.length);
    const bytes = [path, `${path}-wal`].reduce(
      (n, p) => n + (statSync(p, { throwIfNoEntry: false })?.size ?? 0),
      0,
    );
    return {
      watches,
      minutes,
      backgroundRps: rps,
      callsPerWatchHour: round(checks / watches / elapsedHours, 2),
      naiveCallsPerWatchHour: NAIVE_CALLS_PER_WATCH_HOUR,
      checks,
      cpuPerCheckMs: round(cpuPerCheck, 3),
      rssMb: peakRss,
      databaseMb: round(bytes / 2 ** 20, 1),
      dueAtEnd: due,
      oldestDueSeconds: oldestSeconds,
      invoiceReplyP99: { withoutWatches, withWatches, ratio: round(withWatches / withoutWatches, 2) },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function watchTable(results: readonly WatchScenarioResult[]): string {
  const lines = [
    `| measure | ${results.map((r) => `budget ${r.backgroundRps}/s`).join(' | ')} |`,
    `|---|${results.map(() => '--:|').join('')}`,
  ];
  const row = (label: string, value: (r: WatchScenarioResult) => string | number) =>
    lines.push(`| ${label} | ${results.map((r) => String(value(r))).join(' | ')} |`);
  row('active watches', (r) => r.watches);
  row('minutes', (r) => r.minutes);
  row('upstream calls per watch per hour', (r) => r.callsPerWatchHour);
  row('… a fixed 30 s poll would make', (r) => r.naiveCallsPerWatchHour);
  row('checks made', (r) => r.checks);
  row('bot CPU per check (ms)', (r) => r.cpuPerCheckMs);
  row('RSS, peak (MB)', (r) => r.rssMb);
  row('database size (MB)', (r) => r.databaseMb);
  row('checks due but not made at the end', (r) => r.dueAtEnd);
  row('… the oldest of them overdue by (s)', (r) => r.oldestDueSeconds);
  row('/invoice reply p99 without watches (ms)', (r) => r.invoiceReplyP99.withoutWatches);
  row('/invoice reply p99 with watches running (ms)', (r) => r.invoiceReplyP99.withWatches);
  row('… ratio', (r) => r.invoiceReplyP99.ratio);
  return lines.join('\n');
}
