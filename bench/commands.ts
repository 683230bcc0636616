/**
 * The commands scenario of `npm run bench`: the bot and the plain Bolt app (bench/baseline.mjs)
 * under the same closed-loop load, both running at once and measured in turns. A single run of
 * each moved the ratio of their reply p50 by about ±0.06 on this machine, more than the
 * differences worth measuring; so each load runs BENCH_ROUNDS times (default 3), alternating
 * which goes first, and the table gives the median of the rounds, with each round's ratio below.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  handlerMs,
  type LoadResult,
  load,
  markdown,
  mixer,
  percentile,
  round,
  rssMb,
  type Sandbox,
  startTarget,
  type Target,
} from './lib.js';

export const SERVICE_LATENCY_MS = 20;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** The bot's memory under load may be at most this many times the baseline's (issue 18). */
const RSS_RATIO = 1.1;
const WARM_UP = 1000;
const BURST = 100;
const BURST_LATENCY_MS = 200;
const SLOW_LATENCY_MS = 2500;
const SLOW_N = 200;
const SLOW_C = 50;

type Name = 'bot' | 'baseline';
const NAMES: readonly Name[] = ['bot', 'baseline'];

interface Settings {
  n: number;
  concurrency: readonly number[];
  baselineScript: string;
}

const median = (values: number[]) => round(percentile(values, 0.5), 2);

/** Each figure of the rounds' results, the median of its rounds; failures are added up. */
function medianOf(results: LoadResult[]): LoadResult {
  const of = (pick: (r: LoadResult) => number) => median(results.map(pick));
  return {
    ack: { p50: of((r) => r.ack.p50), p99: of((r) => r.ack.p99), max: of((r) => r.ack.max) },
    reply: { p50: of((r) => r.reply.p50), p99: of((r) => r.reply.p99) },
    replyP50By: {
      '/balance': of((r) => r.replyP50By['/balance']),
      '/invoice': of((r) => r.replyP50By['/invoice']),
    },
    commandsPerSecond: of((r) => r.commandsPerSecond),
    upstreamPerCommand: of((r) => r.upstreamPerCommand),
    rssMb: Math.max(...results.map((r) => r.rssMb)),
    cpuPerCommandMs: of((r) => r.cpuPerCommandMs),
    errors: results.reduce((sum, r) => sum + r.errors, 0),
  };
}

/** A burst of /balance at a slow service, then a load at a very slow one: calls made, acks kept. */
async function underSlowService(target: Target, sandbox: Sandbox) {
  await sandbox.setLatency(BURST_LATENCY_MS);
  await sandbox.reset();
  await Promise.all(Array.from({ length: BURST }, () => target.command('/balance', '')));
  const burstUpstreamCalls = await sandbox.requestCount();
  await sandbox.setLatency(SLOW_LATENCY_MS);
  const slow = await load(target, sandbox, SLOW_N, SLOW_C, mixer(sandbox.invoiceIds));
  await sandbox.setLatency(0);
  return { burstUpstreamCalls, slowServiceAckP99: slow.ack.p99, slowServiceAckMax: slow.ack.max };
}

export async function commandsScenario(sandbox: Sandbox, settings: Settings) {
  const started: Target[] = [];
  const start = async (...args: Parameters<typeof startTarget>) => {
    const target = await startTarget(...args);
    started.push(target);
    return target;
  };
  try {
    const targets: Record<Name, Target> = {
      bot: await start('bot', sandbox),
      baseline: await start('baseline', sandbox, settings.baselineScript),
    };
    await sleep(500);
    const idleRssMb = (name: Name) => rssMb(targets[name].bot.child.pid);
    const idle = { bot: idleRssMb('bot'), baseline: idleRssMb('baseline') };
    await sandbox.setLatency(SERVICE_LATENCY_MS);
    // Warm up: JIT, connection pools.
    for (const name of NAMES) await load(targets[name], sandbox, WARM_UP, 10, mixer(sandbox.invoiceIds));
    const keys = settings.concurrency.map((c) => `c${c}`);
    const byKey = <T>(): Record<string, T[]> => Object.fromEntries(keys.map((k) => [k, []]));
    const runs: Record<Name, Record<string, LoadResult[]>> = { bot: byKey(), baseline: byKey() };
    const handler = byKey<{ p50: number; p99: number }>();
    for (let r = 0; r < ROUNDS; r += 1) {
      const order = r % 2 === 0 ? NAMES : [...NAMES].reverse();
      for (const c of settings.concurrency) {
        for (const name of order) {
          const result = await load(targets[name], sandbox, settings.n, c, mixer(sandbox.invoiceIds));
          runs[name][`c${c}`]?.push(result);
          const ms = name === 'bot' ? handlerMs(targets.bot, settings.n) : undefined;
          if (ms) handler[`c${c}`]?.push(ms);
        }
      }
    }
    const measured = async (name: Name) => ({
      idleRssMb: idle[name],
      byConcurrency: Object.fromEntries(Object.entries(runs[name]).map(([c, rs]) => [c, medianOf(rs)])),
      ...(name === 'bot'
        ? {
            handlerMs: Object.fromEntries(
              Object.entries(handler).map(([c, hs]) => [
                c,
                { p50: median(hs.map((h) => h.p50)), p99: median(hs.map((h) => h.p99)) },
              ]),
            ),
          }
        : {}),
      ...(await underSlowService(targets[name], sandbox)),
    });
    const bot = await measured('bot');
    const baseline = await measured('baseline');
    /** Each round's reply p50, bot over baseline, by concurrency. */
    const replyRatios = Object.fromEntries(
      settings.concurrency.map((c) => [
        `c${c}`,
        (runs.bot[`c${c}`] ?? []).map((b, i) =>
          round(b.reply.p50 / (runs.baseline[`c${c}`]?.[i]?.reply.p50 ?? Number.NaN), 2),
        ),
      ]),
    );
    return { rounds: ROUNDS, bot, baseline, replyRatios };
  } finally {
    // Whatever started, even when the other did not, each whatever the other's stop came to.
    await Promise.allSettled(
      started.map(async (target) => {
        await target.pool.close();
        await target.bot.stop();
        await target.slack.close();
      }),
    );
  }
}

type CommandsResult = Awaited<ReturnType<typeof commandsScenario>>;

export function commandsTable({ bot, baseline: base, replyRatios, rounds }: CommandsResult): string {
  const rows: [string, number, number, string][] = [];
  const add = (label: string, ours: number, theirs: number, target = '') =>
    rows.push([label, ours, theirs, target]);
  for (const key of Object.keys(bot.byConcurrency)) {
    const o = bot.byConcurrency[key];
    const b = base.byConcurrency[key];
    if (!o || !b) continue;
    const c = `C=${key.slice(1)}`;
    add(`${c} ack p50 (ms)`, o.ack.p50, b.ack.p50);
    add(`${c} ack p99 (ms)`, o.ack.p99, b.ack.p99, key === 'c10' ? '≤ 30' : '≤ 3000');
    add(`${c} ack max (ms)`, o.ack.max, b.ack.max, '≤ 3000');
    add(`${c} reply p50 (ms)`, o.reply.p50, b.reply.p50, key === 'c10' ? `≤ ${SERVICE_LATENCY_MS + 10}` : '');
    add(`${c} reply p99 (ms)`, o.reply.p99, b.reply.p99);
    for (const name of ['/balance', '/invoice'] as const)
      add(`${c} reply p50 of ${name} alone (ms)`, o.replyP50By[name], b.replyP50By[name]);
    add(`${c} commands/s`, o.commandsPerSecond, b.commandsPerSecond, '≥ baseline');
    add(`${c} upstream calls/command`, o.upstreamPerCommand, b.upstreamPerCommand);
    add(`${c} RSS under load (MB)`, o.rssMb, b.rssMb, `≤ ${RSS_RATIO}× baseline`);
    add(`${c} CPU per command (ms)`, o.cpuPerCommandMs, b.cpuPerCommandMs);
    add(`${c} failed commands`, o.errors, b.errors, '0');
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
  const byRound = Object.entries(replyRatios)
    .map(([key, ratios]) => `C=${key.slice(1)}: ${ratios.join(', ')}`)
    .join('; ');
  return `${markdown(rows)}\n\nMedians of ${rounds} rounds (RSS: the highest; failures: all). Reply p50, bot / baseline, round by round: ${byRound}.`;
}
