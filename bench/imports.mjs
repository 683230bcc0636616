// What each dependency adds to the bot's start and memory beyond the plain Bolt app's:
// `npm run build && node --expose-gc bench/imports.mjs`. Each run is a fresh process that imports
// @slack/bolt (which both load), then the bot's dependencies one at a time, then the bot's own
// modules, and notes for each the wall and CPU time of its import and the RSS and live heap it
// added (after a full GC). Prints the medians of BENCH_IMPORT_RUNS runs (default 5).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SPECS = [
  '@slack/bolt',
  'dotenv',
  'zod',
  'pino',
  'prom-client',
  'lossless-json',
  'big.js',
  'luxon',
  'kysely',
  'libsql',
  'pg',
  '../dist/config.js',
  '../dist/logger.js',
  '../dist/metrics.js',
  '../dist/payments/index.js',
  '../dist/store/database.js',
  '../dist/app.js',
];

async function once() {
  const cpuMs = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  const mb = (bytes) => bytes / 2 ** 20;
  const costs = {};
  for (const spec of SPECS) {
    globalThis.gc();
    const before = { cpu: cpuMs(), rss: process.memoryUsage().rss, heap: process.memoryUsage().heapUsed };
    const started = performance.now();
    await import(spec);
    const ms = performance.now() - started;
    const cpu = cpuMs() - before.cpu;
    globalThis.gc();
    const { rss, heapUsed } = process.memoryUsage();
    costs[spec] = [ms, cpu, mb(rss - before.rss), mb(heapUsed - before.heap)];
  }
  return costs;
}

if (process.argv[2] === '--once') {
  process.stdout.write(JSON.stringify(await once()));
} else {
  if (typeof globalThis.gc !== 'function') throw new Error('run it with node --expose-gc');
  const runs = Number(process.env.BENCH_IMPORT_RUNS ?? 5);
  const script = fileURLToPath(import.meta.url);
  const results = Array.from({ length: runs }, () =>
    JSON.parse(execFileSync(process.execPath, ['--expose-gc', script, '--once'], { encoding: 'utf8' })),
  );
  const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  console.log(`Medians of ${runs} runs, each import after the ones above it\n`);
  console.log('| import | wall (ms) | CPU (ms) | RSS (MB) | live heap (MB) |');
  console.log('|---|--:|--:|--:|--:|');
  for (const spec of SPECS) {
    const [ms, cpu, rss, heap] = [0, 1, 2, 3].map((i) => median(results.map((r) => r[spec][i])));
    console.log(
      `| ${spec} | ${ms.toFixed(0)} | ${cpu.toFixed(0)} | ${rss.toFixed(1)} | ${heap.toFixed(2)} |`,
    );
  }
}
