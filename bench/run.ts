/**
 * `npm run bench`: what a busy workspace does to the bot, on loopback, beside a plain Bolt app
 * (bench/baseline.mjs) under the same load in the same run. Prints a table and JSON, and writes
 * the JSON to bench/results/latest.json.
 *
 * Options (environment): BENCH_N (default 2000 commands), BENCH_C (default "10,50"),
 * BENCH_CPU_PROF=<dir> to write a V8 CPU profile of the bot (node --cpu-prof) into <dir>,
 * BENCH_ROUNDS (default 3 rounds of each command load, bench/commands.ts),
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
import { commandsScenario, commandsTable, SERVICE_LATENCY_MS } from './commands.js';
import { digestScenario } from './digest.js';
import { markdown, measureReady, type ReadyResult, round, Sandbox } from './lib.js';
import { tenantScenario, tenantSettings, tenantTable } from './tenants.js';
import { type WatchScenarioResult, watchScenario, watchTable } from './watches.js';
import { weightScenario } from './weight.js';

const N = Number(process.env.BENCH_N ?? 2000);
const SCENARIOS = (process.env.BENCH_SCENARIOS ?? 'ready,commands,watches,digest').split(',');
const READY_RUNS = Number(process.env.BENCH_READY_RUNS ?? 5);
const BASELINE = new URL('./baseline.mjs', import.meta.url).pathname;
/** The bot may take at most this much longer than the baseline from spawn to ready (issue 18). */
const READY_MARGIN_MS = 200;
const WATCHES = Number(process.env.BENCH_WATCHES ?? 10_000);
const WATCH_MINUTES = Number(process.env.BENCH_WATCH_MINUTES ?? 10);
const WATCH_RPS = (process.env.BENCH_WATCH_RPS ?? '5,50').split(',').map(Number);
const CONCURRENCY = (process.env.BENCH_C ?? '10,50').split(',').map(Number);

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
  const commands = await commandsScenario(sandbox, {
    n: N,
    concurrency: CONCURRENCY,
    baselineScript: BASELINE,
  });
  report.commands = {
    settings: { n: N, concurrency: CONCURRENCY, serviceLatencyMs: SERVICE_LATENCY_MS },
    ...commands,
  };
  console.log(
    `${N} commands per run (half /balance, half /invoice over 1,000 distinct invoices), service latency ${SERVICE_LATENCY_MS} ms\n`,
  );
  console.log(`${commandsTable(commands)}\n`);
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
