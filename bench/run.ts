/**
 * `npm run bench`: what a busy workspace does to the bot, on loopback, beside a plain Bolt app
 * (bench/baseline.mjs) under the same load in the same run. Prints a table and JSON, and writes
 * the JSON to bench/results/latest.json.
 *
 * Options (environment): BENCH_N (default 2000 commands), BENCH_C (default "10,50"),
 * BENCH_CPU_PROF=<dir> to write a V8 CPU profile of the bot (node --cpu-prof) into <dir>.
 */
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { Pool } from 'undici';
import { type BotProcess, botEnv, HOME_TEAM, SECRETS, startBot } from '../test/e2e/harness.js';
import { commandBody, signatureHeaders } from '../test/support/slack-requests.js';
import { type SlackStandIn, startSlackStandIn } from '../test/support/slack-stand-in.js';

const N = Number(process.env.BENCH_N ?? 2000);
const CONCURRENCY = (process.env.BENCH_C ?? '10,50').split(',').map(Number);
const SERVICE_LATENCY_MS = 20;
const BURST = 100;
const BURST_LATENCY_MS = 200;
const SLOW_LATENCY_MS = 2500;
const SLOW_N = 200;
const SLOW_C = 50;

interface Sample {
  ackMs: number;
  replyMs: number;
}

interface LoadResult {
  ack: { p50: number; p99: number; max: number };
  reply: { p50: number; p99: number };
  commandsPerSecond: number;
  upstreamPerCommand: number;
  rssMb: number;
  /** CPU the bot's process spent per command (user + system). */
  cpuPerCommandMs: number;
  errors: number;
}

type SandboxCommand =
  | { type: 'latency'; ms: number }
  | { type: 'reset' }
  | { type: 'count' }
  | { type: 'close' };

/** The sandbox on a worker thread (see sandbox-worker.mjs), driven by messages. */
class Sandbox {
  #next = 0;
  private constructor(
    private readonly worker: Worker,
    readonly url: string,
    readonly apiKey: string,
    readonly payUrl: string,
    /** Distinct invoices the sandbox serves. */
    readonly invoiceIds: readonly string[],
  ) {}

  static async start(): Promise<Sandbox> {
    const worker = new Worker(new URL('./sandbox-worker.mjs', import.meta.url));
    const [ready] = (await once(worker, 'message')) as [
      { url: string; apiKey: string; payUrl: string; invoiceIds: string[] },
    ];
    return new Sandbox(worker, ready.url, ready.apiKey, ready.payUrl, ready.invoiceIds);
  }

  async #send(command: SandboxCommand): Promise<number> {
    const id = ++this.#next;
    this.worker.postMessage({ ...command, id });
    for (;;) {
      const [reply] = (await once(this.worker, 'message')) as [{ id: number; count: number }];
      if (reply.id === id) return reply.count;
    }
  }

  setLatency = (ms: number) => this.#send({ type: 'latency', ms });
  reset = () => this.#send({ type: 'reset' });
  /** Upstream requests received since the last reset. */
  requestCount = () => this.#send({ type: 'count' });
  close = async () => {
    await this.#send({ type: 'close' });
    await this.worker.terminate();
  };
}

const percentile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
};
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

function rssMb(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  return round(kb / 1024);
}

/** CPU time (user + system) a process has used, in ms, from /proc/<pid>/stat. */
function cpuMs(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

class Target {
  readonly pool: Pool;
  constructor(
    readonly name: string,
    readonly bot: BotProcess,
    readonly slack: SlackStandIn,
  ) {
    this.pool = new Pool(bot.url, { connections: 64, pipelining: 1 });
  }

  /** One slash command, as Slack sends it; resolves when the reply has reached the user. */
  async command(name: '/balance' | '/invoice', text: string): Promise<Sample & { ok: boolean }> {
    const responseUrl = this.slack.responseUrl();
    const body = commandBody({ command: name, text, response_url: responseUrl });
    const started = performance.now();
    const response = await this.pool.request({
      path: '/slack/events',
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...signatureHeaders(SECRETS.signingSecret, body),
      },
      body,
    });
    const ackBody = await response.body.text();
    const ackMs = performance.now() - started;
    if (response.statusCode !== 200) return { ackMs, replyMs: ackMs, ok: false };
    if (ackBody !== '') return { ackMs, replyMs: ackMs, ok: true };
    const post = await this.slack.waitForPost(responseUrl, 30_000);
    return { ackMs, replyMs: post.at - (Date.now() - (performance.now() - started)), ok: true };
  }
}

/** Closed-loop load: `c` workers send commands back to back until `n` have been answered. */
async function load(
  target: Target,
  sandbox: Sandbox,
  n: number,
  c: number,
  mix: () => ['/balance' | '/invoice', string],
) {
  await sandbox.reset();
  const samples: Sample[] = [];
  let errors = 0;
  let next = 0;
  let peakRss = 0;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, rssMb(target.bot.child.pid));
  }, 100);
  const cpuBefore = cpuMs(target.bot.child.pid);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (next < n) {
        next += 1;
        const [name, text] = mix();
        const result = await target.command(name, text);
        if (!result.ok) errors += 1;
        samples.push(result);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuPerCommandMs = round((cpuMs(target.bot.child.pid) - cpuBefore) / n, 2);
  clearInterval(sampler);
  const acks = samples.map((s) => s.ackMs);
  const replies = samples.map((s) => s.replyMs);
  return {
    ack: {
      p50: round(percentile(acks, 0.5)),
      p99: round(percentile(acks, 0.99)),
      max: round(Math.max(...acks)),
    },
    reply: { p50: round(percentile(replies, 0.5)), p99: round(percentile(replies, 0.99)) },
    commandsPerSecond: round(n / seconds, 0),
    upstreamPerCommand: round((await sandbox.requestCount()) / n, 3),
    rssMb: peakRss,
    cpuPerCommandMs,
    errors,
  } satisfies LoadResult;
}

/** Alternates /balance (one answer for everyone) and /invoice over the sandbox's distinct invoices. */
function mixer(ids: readonly string[]) {
  let i = 0;
  return (): ['/balance' | '/invoice', string] => {
    i += 1;
    return i % 2 === 0 ? ['/balance', ''] : ['/invoice', ids[i % ids.length] ?? ''];
  };
}

async function startTarget(name: string, sandbox: Sandbox, script?: string): Promise<Target> {
  const slack = await startSlackStandIn({ teamId: HOME_TEAM, botToken: SECRETS.botToken });
  const bot = await startBot(
    { ...botEnv(sandbox, slack.apiUrl), LOG_LEVEL: 'info' },
    {
      ...(script ? { script } : {}),
      nodeArgs:
        process.env.BENCH_CPU_PROF && !script
          ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
          : [],
    },
  );
  return new Target(name, bot, slack);
}

/** The bot's own view: its request-log `ms` (listener start to ack) for the last `n` commands. */
function handlerMs(target: Target, n: number) {
  const ms = target.bot
    .logs()
    .filter((l) => l.kind === 'command')
    .slice(-n)
    .map((l) => Number(l.ms));
  return ms.length === 0 ? undefined : { p50: round(percentile(ms, 0.5)), p99: round(percentile(ms, 0.99)) };
}

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
    add(`C=${c} commands/s`, o.commandsPerSecond, b.commandsPerSecond, '≥ baseline');
    add(`C=${c} upstream calls/command`, o.upstreamPerCommand, b.upstreamPerCommand);
    add(`C=${c} RSS under load (MB)`, o.rssMb, b.rssMb, '≤ 150');
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
  const lines = ['| measure | bot | baseline | bot / baseline | target |', '|---|--:|--:|--:|---|'];
  for (const [label, ours, theirs, target] of rows) {
    const ratio = theirs === 0 ? (ours === 0 ? '1' : '—') : String(round(ours / theirs, 2));
    lines.push(`| ${label} | ${ours} | ${theirs} | ${ratio} | ${target} |`);
  }
  return lines.join('\n');
}

const sandbox = await Sandbox.start();
const results: Record<string, Measured> = {};
for (const [name, script] of [
  ['bot', undefined],
  ['baseline', new URL('./baseline.mjs', import.meta.url).pathname],
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
await sandbox.close();

const bot = results.bot;
const baseline = results.baseline;
if (!bot || !baseline) throw new Error('a target did not run');
const report = {
  date: new Date().toISOString(),
  machine: {
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
    memoryGb: round(totalmem() / 2 ** 30),
    node: process.version,
  },
  settings: { n: N, concurrency: CONCURRENCY, serviceLatencyMs: SERVICE_LATENCY_MS },
  bot,
  baseline,
};
console.log(
  `Benchmark ${report.date} — ${report.machine.cpus} × ${report.machine.cpu}, Node ${report.machine.node}`,
);
console.log(
  `${N} commands per run (half /balance, half /invoice over 1,000 distinct invoices), service latency ${SERVICE_LATENCY_MS} ms\n`,
);
console.log(table(bot, baseline));
console.log(`\n${JSON.stringify(report, null, 2)}`);
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(new URL('./results/latest.json', import.meta.url), `${JSON.stringify(report, null, 2)}\n`);
