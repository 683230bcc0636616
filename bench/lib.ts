/** What both benchmark scenarios share: the sandbox on its own thread, load generation, /proc readings. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { Pool, request } from 'undici';
import { type BotProcess, botEnv, HOME_TEAM, SECRETS, startBot } from '../test/e2e/harness.js';
import { commandBody, signatureHeaders } from '../test/support/slack-requests.js';
import { type SlackStandIn, startSlackStandIn } from '../test/support/slack-stand-in.js';

export interface Sample {
  ackMs: number;
  replyMs: number;
}

type CommandName = '/balance' | '/invoice';

export interface LoadResult {
  ack: { p50: number; p99: number; max: number };
  reply: { p50: number; p99: number };
  /** Reply p50 of each command alone: which one a difference comes from. */
  replyP50By: Record<CommandName, number>;
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
  | { type: 'count'; prefix?: string }
  | { type: 'merchants'; merchants: { apiKey: string; invoiceIds: string[] }[] }
  | { type: 'update'; apiKey: string; invoiceId: string; patch: Record<string, string> }
  | { type: 'calls'; prefix: string }
  | { type: 'close' };

/** A call the sandbox received: when (ms since the epoch), and its `Authorization` header. */
export type SandboxCall = [at: number, authorization: string];

/** The sandbox on a worker thread (see sandbox-worker.mjs), driven by messages. */
export class Sandbox {
  #next = 0;
  private constructor(
    private readonly worker: Worker,
    readonly url: string,
    readonly apiKey: string,
    readonly payUrl: string,
    /** Distinct invoices the sandbox serves. */
    readonly invoiceIds: readonly string[],
  ) {}

  /** `watched`: how many invoices to serve for watches besides the 1,000 for /invoice. */
  static async start(watched = 0): Promise<Sandbox> {
    const worker = new Worker(new URL('./sandbox-worker.mjs', import.meta.url), { workerData: { watched } });
    const [ready] = (await once(worker, 'message')) as [
      { url: string; apiKey: string; payUrl: string; invoiceIds: string[] },
    ];
    return new Sandbox(worker, ready.url, ready.apiKey, ready.payUrl, ready.invoiceIds);
  }

  async #ask(command: SandboxCommand): Promise<{ count: number; calls?: SandboxCall[] }> {
    const id = ++this.#next;
    this.worker.postMessage({ ...command, id });
    for (;;) {
      const [reply] = (await once(this.worker, 'message')) as [
        { id: number; count: number; calls?: SandboxCall[] },
      ];
      if (reply.id === id) return reply;
    }
  }

  async #send(command: SandboxCommand): Promise<number> {
    return (await this.#ask(command)).count;
  }

  setLatency = (ms: number) => this.#send({ type: 'latency', ms });
  reset = () => this.#send({ type: 'reset' });
  /** Upstream requests received since the last reset, only those whose path starts with `prefix` if given. */
  requestCount = (prefix?: string) => this.#send(prefix ? { type: 'count', prefix } : { type: 'count' });
  /** More merchants, each with its own key and invoices (the first demo invoice under these ids, far from expiry). */
  addMerchants = (merchants: { apiKey: string; invoiceIds: string[] }[]) =>
    this.#send({ type: 'merchants', merchants });
  /** Changes one of a merchant's invoices, as a payment would. */
  updateMerchantInvoice = (apiKey: string, invoiceId: string, patch: Record<string, string>) =>
    this.#send({ type: 'update', apiKey, invoiceId, patch });
  /** The calls received since the last reset whose path starts with `prefix`. */
  calls = async (prefix: string): Promise<SandboxCall[]> =>
    (await this.#ask({ type: 'calls', prefix })).calls ?? [];
  close = async () => {
    await this.#send({ type: 'close' });
    await this.worker.terminate();
  };
}

export const percentile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
};
export const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

export function rssMb(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  return round(kb / 1024);
}

/** CPU time (user + system) a process has used, in ms, from /proc/<pid>/stat. */
export function cpuMs(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

export class Target {
  readonly pool: Pool;
  constructor(
    readonly name: string,
    readonly bot: BotProcess,
    readonly slack: SlackStandIn,
  ) {
    this.pool = new Pool(bot.url, { connections: 64, pipelining: 1 });
  }

  /** One slash command, as Slack sends it; resolves when the reply has reached the user. */
  async command(name: CommandName, text: string): Promise<Sample & { ok: boolean }> {
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

const replyP50 = (samples: readonly (Sample & { name: CommandName })[], name: CommandName) =>
  round(
    percentile(
      samples.filter((s) => s.name === name).map((s) => s.replyMs),
      0.5,
    ),
  );

/** Closed-loop load: `c` workers send commands back to back until `n` have been answered. */
export async function load(
  target: Target,
  sandbox: Sandbox,
  n: number,
  c: number,
  mix: () => [CommandName, string],
) {
  await sandbox.reset();
  const samples: (Sample & { name: CommandName })[] = [];
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
        samples.push({ ...result, name });
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
    replyP50By: {
      '/balance': replyP50(samples, '/balance'),
      '/invoice': replyP50(samples, '/invoice'),
    },
    commandsPerSecond: round(n / seconds, 0),
    upstreamPerCommand: round((await sandbox.requestCount()) / n, 3),
    rssMb: peakRss,
    cpuPerCommandMs,
    errors,
  } satisfies LoadResult;
}

/** Alternates /balance (one answer for everyone) and /invoice over the sandbox's distinct invoices. */
export function mixer(ids: readonly string[]) {
  let i = 0;
  return (): [CommandName, string] => {
    i += 1;
    return i % 2 === 0 ? ['/balance', ''] : ['/invoice', ids[i % ids.length] ?? ''];
  };
}

/** BENCH_NODE_ARGS: options for the bot's `node` (never the baseline's), to weigh V8 settings. */
export const botNodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);

export async function startTarget(
  name: string,
  sandbox: Sandbox,
  script?: string,
  env: Record<string, string> = {},
): Promise<Target> {
  const slack = await startSlackStandIn({ teamId: HOME_TEAM, botToken: SECRETS.botToken });
  const nodeArgs = script
    ? []
    : [
        ...botNodeArgs,
        ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
      ];
  try {
    const bot = await startBot(
      { ...botEnv(sandbox, slack.apiUrl), LOG_LEVEL: 'info', ...env },
      { ...(script ? { script } : {}), nodeArgs },
    );
    return new Target(name, bot, slack);
  } catch (error) {
    await slack.close(); // the stand-in of a bot that did not start
    throw error;
  }
}

/** The bot's own view: its request-log `ms` (listener start to ack) for the last `n` commands. */
export function handlerMs(target: Target, n: number) {
  const ms = target.bot
    .logs()
    .filter((l) => l.kind === 'command')
    .slice(-n)
    .map((l) => Number(l.ms));
  return ms.length === 0 ? undefined : { p50: round(percentile(ms, 0.5)), p99: round(percentile(ms, 0.99)) };
}

/** A port nothing listens on now, for a process that must be told its port before it starts. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** Whether `GET /healthz` answers 200 now; false while nothing listens or it answers 503. */
async function healthy(url: string): Promise<boolean> {
  try {
    const response = await request(url, { reset: true });
    await response.body.dump();
    return response.statusCode === 200;
  } catch {
    return false;
  }
}

const MAIN = new URL('../dist/main.js', import.meta.url).pathname;

/**
 * From spawning `node <script>` (the bot's dist/main.js when none is given) to its first 200 from
 * `GET /healthz`, polled every 5 ms: how long a deploy or a restart keeps it away (`ms`), and
 * the CPU the process used until then (`cpuMs`, steadier than `ms` on a busy machine).
 * `cwd` holds the bot's SQLite store (./data): a new directory starts on an empty store.
 */
export async function readyMs(
  env: Record<string, string>,
  cwd: string,
  script?: string,
): Promise<{ ms: number; cpuMs: number }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/healthz`;
  const started = performance.now();
  const child = spawn(process.execPath, script ? [script] : [...botNodeArgs, MAIN], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env, PORT: String(port) },
    stdio: 'ignore',
  });
  const exited = once(child, 'exit');
  try {
    for (;;) {
      if (await healthy(url)) return { ms: performance.now() - started, cpuMs: cpuMs(child.pid) };
      if (child.exitCode !== null)
        throw new Error(`${script ?? MAIN} exited with ${child.exitCode} at start`);
      if (performance.now() - started > 20_000)
        throw new Error(`${script ?? MAIN} was not ready within 20 s`);
      await sleep(5);
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

export interface ReadyResult {
  bot: { emptyStore: Spread; restart: Spread };
  baseline: Spread;
}
/** Spawn to ready over the runs, in ms: median and range, and the median CPU used until then. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  cpuMs: number;
}
const spread = (runs: { ms: number; cpuMs: number }[]): Spread => {
  const ms = runs.map((r) => r.ms);
  return {
    median: round(percentile(ms, 0.5), 0),
    min: round(Math.min(...ms), 0),
    max: round(Math.max(...ms), 0),
    cpuMs: round(
      percentile(
        runs.map((r) => r.cpuMs),
        0.5,
      ),
      0,
    ),
  };
};

/**
 * Spawn to ready, `runs` times each, interleaved so that both see the same load on the machine:
 * the bot on an empty store (its migrations run), the bot again on that store (a restart), and
 * the baseline.
 */
export async function measureReady(
  sandbox: Sandbox,
  runs: number,
  baselineScript: string,
): Promise<ReadyResult> {
  const slack = await startSlackStandIn({ teamId: HOME_TEAM, botToken: SECRETS.botToken });
  const env = botEnv(sandbox, slack.apiUrl);
  const emptyStore: { ms: number; cpuMs: number }[] = [];
  const restart: { ms: number; cpuMs: number }[] = [];
  const baseline: { ms: number; cpuMs: number }[] = [];
  try {
    for (let i = 0; i < runs; i += 1) {
      const cwd = mkdtempSync(join(tmpdir(), 'bot-bench-ready-'));
      try {
        emptyStore.push(await readyMs(env, cwd));
        restart.push(await readyMs(env, cwd));
        baseline.push(await readyMs(env, cwd, baselineScript));
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
    }
  } finally {
    await slack.close();
  }
  return { bot: { emptyStore: spread(emptyStore), restart: spread(restart) }, baseline: spread(baseline) };
}

/** A table of figures, the bot beside the baseline, with their ratio and the target. */
export function markdown(rows: [string, number, number, string][]): string {
  const lines = ['| measure | bot | baseline | bot / baseline | target |', '|---|--:|--:|--:|---|'];
  for (const [label, ours, theirs, target] of rows) {
    const ratio = theirs === 0 ? (ours === 0 ? '1' : '—') : String(round(ours / theirs, 2));
    lines.push(`| ${label} | ${ours} | ${theirs} | ${ratio} | ${target} |`);
  }
  return lines.join('\n');
}
