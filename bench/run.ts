/**
 * `npm run bench`: what a busy workspace does to the bot, on loopback, beside a plain Bolt app
 * (bench/baseline.mjs) under the same load in the same run. Prints a table and JSON, and writes
 * the JSON to bench/results/latest.json.
 *
 * Options (environment): BENCH_N (default 2000 commands), BENCH_C (default "10,50"),
 * BENCH_CPU_PROF=<dir> to write a V8 CPU profile of the bot (node --cpu-prof) into <dir>,
 * BENCH_READY_RUNS (default 5 starts of each), BENCH_NODE_ARGS (options for the bot's node only,
 * e.g. "--max-semi-space-size=8", to weigh V8 settings), BENCH_SCENARIOS (default
 * "ready,commands,watches,digest"; see bench/watches.ts for its own options). The scenario "tenants"
 * (many workspaces, three instances on PostgreSQL; issue 19) runs only when named there, e.g.
 * BENCH_SCENARIOS=tenants: it starts PostgreSQL and takes minutes; see bench/tenants.ts for
 * its options (BENCH_TENANTS, BENCH_TENANT_WATCHES, BENCH_BIG_WATCHES, BENCH_TENANT_INSTANCES,
 * BENCH_TENANT_MINUTES, BENCH_TENANT_CHANGES, BENCH_TENANT_RPS, BENCH_TENANT_POLL_SECONDS).
 * "tenants-30k" is the same at the scale issue 39 aims for: 3,000 installations × 10 watches, no
 * big one (30,000 watches, 1,000 checks a second at a 30 s poll).
 * The scenario "weight" (BENCH_SCENARIOS=weight, seconds) weighs one installation kept in memory
 * (bench/weight.ts; BENCH_WEIGHT_TENANTS, default 2000).
 * The scenario "digest" (seconds) reads and renders a digest with charts for 60 coins and 11,520
 * readings each (bench/digest.ts; BENCH_DIGEST_RUNS, default 20).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { digestScenario } from './digest.js';
import {
  handlerMs,
  type LoadResult,
  load,
  measureReady,
  mixer,
  type ReadyResult,
  round,
  rssMb,
  Sandbox,
  startTarget,
  type Target,
} from './lib.js';
import { tenantScenario, tenantSettings, tenantTable } from './tenants.js';
import { type WatchScenarioResult, watchScenario, watchTable } from './watches.js';
import { weightScenario } from './weight.js';

const N = Number(process.env.BENCH_N ?? 2000);
const SCENARIOS = (process.env.BENCH_SCENARIOS ?? 'ready,commands,watches,digest').split(',');
const READY_RUNS = Number(process.env.BENCH_READY_RUNS ?? 5);
const BASELINE = new URL('./baseline.mjs', import.meta.url).pathname;
/** The bot's memory under load may be at most this many times the baseline's (issue 18). */
const RSS_RATIO = 1.1;
/** The bot may take at most this much longer than the baseline from spawn to ready (issue 18). */
const READY_MARGIN_MS = 200;
const WATCHES = Number(process.env.BENCH_WATCHES ?? 10_000);
const WATCH_MINUTES = Number(process.env.BENCH_WATCH_MINUTES ?? 10);
const WATCH_RPS = (process.env.BENCH_WATCH_RPS ?? '5,50').split(',').map(Number);
const CONCURRENCY = (process.env.BENCH_C ?? '10,50').split(',').map(Number);
const SERVICE_LATENCY_MS = 20;
const BURST = 100;
const BURST_LATENCY_MS = 200;
const SLOW_LATENCY_MS = 2500;
const SLOW_N = 200;
const SLOW_C = 50;

async function measure(target: Target, sandbox: Sandbox) {
  await sleep(500);
  const idleRssMb = rssMb(target.bot.child.pid);
  await sandbox.setLatency(SERVICE_LATENCY_MS);
  // Warm up: JIT, connection pools.
  await load(target, sandbox, 200, 10, mixer(sandbox.invoiceIds));
  const byConcurrency: Record<string, LoadResult> = {};
  const handler: Record<string, ReturnType<typeof handlerMs>> = {};
  for (const c of CONCURRENCY) {
    byConcurrency[`c${c}`] = await load(target, sandbox, N, c, mixer(sandbox.invoiceIds));
    handler[`c${c}`] = handlerMs(target, N);
  }

  await sandbox.setLatency(BURST_LATENCY_MS);
  await sandbox.reset();
  await Promise.all(Array.from({ length: BURST }, () => target.command('/balance', '')));
  const burstUpstreamCalls = await sandbox.requestCount();

  await sandbox.setLatency(SLOW_LATENCY_MS);
  const slow = await load(target, sandbox, SLOW_N, SLOW_C, mixer(sandbox.invoiceIds));
  await sandbox.setLatency(0);
  return {
    idleRssMb,
    byConcurrency,
    handlerMs: handler,
    burstUpstreamCalls,
    slowServiceAckP99: slow.ack.p99,
    slowServiceAckMax: slow.ack.max,
  };
}

type Measured = Awaited<ReturnType<typeof measure>>;

function table(bot: Measured, base: Measured): string {
  const rows: [string, number, number, string][] = [];
  const add = (label: string, ours: number, theirs: number, target = '') =>
    rows.push([label, ours, theirs, target]);
  for (const c of CONCURRENCY) {
    const o = bot.byConcurrency[`c${c}`];
    const b = base.byConcurrency[`c${c}`];
    if (!o || !b) continue;
    add(`C=${c} ack p50 (ms)`, o.ack.p50, b.ack.p50);
    add(`C=${c} ack p99 (ms)`, o.ack.p99, b.ack.p99, c === 10 ? '≤ 30' : '≤ 3000');
    add(`C=${c} ack max (ms)`, o.ack.max, b.ack.max, '≤ 3000');
    add(`C=${c} reply p50 (ms)`, o.reply.p50, b.reply.p50, c === 10 ? `≤ ${SERVICE_LATENCY_MS + 10}` : '');
    add(`C=${c} reply p99 (ms)`, o.reply.p99, b.reply.p99);
    for (const name of ['/balance', '/invoice'] as const)
      add(`C=${c} reply p50 of ${name} alone (ms)`, o.replyP50By[name], b.replyP50By[name]);
    add(`C=${c} commands/s`, o.commandsPerSecond, b.commandsPerSecond, '≥ baseline');
    add(`C=${c} upstream calls/command`, o.upstreamPerCommand, b.upstreamPerCommand);
    add(`C=${c} RSS under load (MB)`, o.rssMb, b.rssMb, `≤ ${RSS_RATIO}× baseline`);
    add(`C=${c} CPU per command (ms)`, o.cpuPerCommandMs, b.cpuPerCommandMs);
    add(`C=${c} failed commands`, o.errors, b.errors, '0');
  }
  add('RSS idle (MB)', bot.idleRssMb, base.idleRssMb);
  add(
    `upstream calls, burst of ${BURST} /balance (service ${BURST_LATENCY_MS} ms)`,
    bot.burstUpstreamCalls,
    base.burstUpstreamCalls,
    '≤ 2',
  );
  add(
    `ack p99 (ms), service ${SLOW_LATENCY_MS} ms, C=${SLOW_C}`,
    bot.slowServiceAckP99,
    base.slowServiceAckP99,
    '≤ 3000',
  );
  add(
    `ack max (ms), service ${SLOW_LATENCY_MS} ms, C=${SLOW_C}`,
    bot.slowServiceAckMax,
    base.slowServiceAckMax,
    '≤ 3000',
  );
  return markdown(rows);
}

function markdown(rows: [string, number, number, string][]): string {
  const lines = ['| measure | bot | baseline | bot / baseline | target |', '|---|--:|--:|--:|---|'];
  for (const [label, ours, theirs, target] of rows) {
    const ratio = theirs === 0 ? (ours === 0 ? '1' : '—') : String(round(ours / theirs, 2));
    lines.push(`| ${label} | ${ours} | ${theirs} | ${ratio} | ${target} |`);
  }
  return lines.join('\n');
}

/** Medians over the runs; the ranges follow the table. */
function readyTable({ bot, baseline }: ReadyResult): string {
  const target = `≤ baseline + ${READY_MARGIN_MS}`;
  const range = (s: { median: number; min: number; max: number }) => `${s.median} ms (${s.min}–${s.max})`;
  return [
    markdown([
      ['spawn to ready /healthz, empty store (ms)', bot.emptyStore.median, baseline.median, target],
      ['spawn to ready /healthz, restart (ms)', bot.restart.median, baseline.median, target],
      ['CPU used until ready, restart (ms)', bot.restart.cpuMs, baseline.cpuMs, ''],
    ]),
    '',
    `Medians (ranges) over ${READY_RUNS} starts each: bot on an empty store ${range(bot.emptyStore)}, ` +
      `restarting on it ${range(bot.restart)}; baseline ${range(baseline)}.`,
  ].join('\n');
}

const sandbox = await Sandbox.start(SCENARIOS.includes('watches') ? WATCHES : 0);
const report: Record<string, unknown> = {
  date: new Date().toISOString(),
  machine: {
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
    memoryGb: round(totalmem() / 2 ** 30),
    node: process.version,
    /** Other work on the machine moves every figure: the 1, 5 and 15-minute load averages at the start. */
    loadAverage: loadavg().map((l) => round(l, 2)),
  },
};
console.log(
  `Benchmark ${report.date} — ${cpus().length} × ${cpus()[0]?.model}, Node ${process.version}, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}\n`,
);

if (SCENARIOS.includes('ready')) {
  const ready = await measureReady(sandbox, READY_RUNS, BASELINE);
  report.ready = ready;
  console.log('From spawn to the first 200 from GET /healthz, one process at a time\n');
  console.log(`${readyTable(ready)}\n`);
}

if (SCENARIOS.includes('commands')) {
  const results: Record<string, Measured> = {};
  for (const [name, script] of [
    ['bot', undefined],
    ['baseline', BASELINE],
  ] as const) {
    const target = await startTarget(name, sandbox, script);
    try {
      results[name] = await measure(target, sandbox);
    } finally {
      await target.pool.close();
      await target.bot.stop();
      await target.slack.close();
    }
  }
  const bot = results.bot;
  const baseline = results.baseline;
  if (!bot || !baseline) throw new Error('a target did not run');
  report.commands = {
    settings: { n: N, concurrency: CONCURRENCY, serviceLatencyMs: SERVICE_LATENCY_MS },
    bot,
    baseline,
  };
  console.log(
    `${N} commands per run (half /balance, half /invoice over 1,000 distinct invoices), service latency ${SERVICE_LATENCY_MS} ms\n`,
  );
  console.log(`${table(bot, baseline)}\n`);
}

if (SCENARIOS.includes('watches')) {
  const watches: WatchScenarioResult[] = [];
  for (const rps of WATCH_RPS) watches.push(await watchScenario(sandbox, WATCHES, WATCH_MINUTES, rps));
  report.watches = watches;
  console.log(
    `${WATCHES} active watches of every age up to a week, ${WATCH_MINUTES} minutes each, service latency 20 ms\n`,
  );
  console.log(`${watchTable(watches)}\n`);
}

/** The tenants scenario as named: today's default, or at the target scale (3,000 installations × 10 watches, none big). */
const TENANT_SCALES = {
  tenants: () => tenantSettings(),
  'tenants-30k': () => ({ ...tenantSettings(), tenants: 3000, watchesEach: 10, bigWatches: 0 }),
} as const;
for (const [name, settingsOf] of Object.entries(TENANT_SCALES)) {
  if (!SCENARIOS.includes(name)) continue;
  const settings = settingsOf();
  const tenants = await tenantScenario(sandbox, settings);
  report[name === 'tenants' ? 'tenants' : 'tenants30k'] = tenants;
  console.log(
    `Many workspaces on PostgreSQL (${name}): ${settings.tenants} installations with ${settings.watchesEach} watches each and one with ${settings.bigWatches}, ${settings.instances} instances, ${settings.minutes} minutes, ${tenants.changes} invoice changes, service latency 20 ms, load average ${tenants.loadAverage.join(' ')} at the start\n`,
  );
  console.log(`${tenantTable(tenants)}\n`);
}
if (SCENARIOS.includes('weight')) {
  const weight = await weightScenario(sandbox.url, Number(process.env.BENCH_WEIGHT_TENANTS ?? 2000));
  report.weight = weight;
  console.log(
    `Many workspaces: ${weight.tenants} installations kept in memory take ${weight.totalMb} MB of heap, ${weight.perTenantKb} KB each\n`,
  );
}
if (SCENARIOS.includes('digest')) {
  const digest = await digestScenario(Number(process.env.BENCH_DIGEST_RUNS ?? 20));
  report.digest = digest;
  console.log(
    `A digest with charts for ${digest.coins} coins and ${digest.readings} readings each: read ${digest.readMs} ms (${digest.readStatements} statement), rendered ${digest.renderMs} ms (medians), ${digest.messageChars} characters\n`,
  );
}
await sandbox.close();

console.log(JSON.stringify(report, null, 2));
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(new URL('./results/latest.json', import.meta.url), `${JSON.stringify(report, null, 2)}\n`);
