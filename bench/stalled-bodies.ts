/**
 * Stalled bodies (issue 28): what half-sent requests to `POST /slack/events` cost the built bot
 * (dist/main.js, started as `npm start` does). Not one of `npm run bench`'s scenarios; run it
 * with `npm run build && npx tsx bench/stalled-bodies.ts`.
 *
 * Two rounds, each against a bot of its own, each of BENCH_STALLED clients (default 60) at once:
 * - unsigned: headers announcing a 4 MiB body without `X-Slack-Signature`, then half of it;
 * - forged: a signature of the right shape and a current timestamp (what anyone can send without
 *   the secret), announcing the largest body the bot takes (MAX_BODY_BYTES), then half of it.
 * Each client then stalls. The script records the bot's RSS before, at its peak and at the end
 * of the round, and how long each client waited until it was answered or its connection closed
 * (at most BENCH_STALLED_WAIT_S seconds, default 15; "not refused" past that). Prints a table
 * and JSON.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { MAX_BODY_BYTES } from '../src/http/slack-receiver.js';
import { head, type RawAnswer, rawClient } from '../test/http/raw-client.js';
import { percentile, round, rssMb, Sandbox, startTarget } from './lib.js';

const CLIENTS = Number(process.env.BENCH_STALLED ?? 60);
const WAIT_MS = Number(process.env.BENCH_STALLED_WAIT_S ?? 15) * 1000;
const UNSIGNED_BYTES = 4 * 1024 * 1024;

type Round = Awaited<ReturnType<typeof stalledRound>>;

async function stalledRound(sandbox: Sandbox, headers: () => Record<string, string>, declared: number) {
  const target = await startTarget('bot', sandbox);
  const pid = target.bot.child.pid;
  try {
    await sleep(1000);
    const rssBeforeMb = rssMb(pid);
    let rssPeakMb = rssBeforeMb;
    const sampler = setInterval(() => {
      rssPeakMb = Math.max(rssPeakMb, rssMb(pid));
    }, 50);
    const sent = Math.floor(declared / 2);
    const clients = Array.from({ length: CLIENTS }, () => {
      const request = head('POST', '/slack/events', { ...headers(), 'content-length': String(declared) });
      const client = rawClient(target.bot.port, request, Buffer.alloc(sent, 'x'));
      const outcome: { answer?: RawAnswer } = {};
      void client.answered.then((answer) => {
        outcome.answer = answer;
      });
      return { client, outcome };
    });
    const started = performance.now();
    while (performance.now() - started < WAIT_MS && clients.some((c) => !c.outcome.answer)) await sleep(50);
    const rssEndMb = rssMb(pid);
    clearInterval(sampler);
    for (const c of clients) c.client.socket.destroy();

    const answers = clients.flatMap((c) => (c.outcome.answer ? [c.outcome.answer] : []));
    const times = answers.map((a) => a.firstByteMs ?? a.closedMs);
    const outcomes: Record<string, number> = {};
    for (const c of clients) {
      const key = c.outcome.answer ? String(c.outcome.answer.status ?? 'closed') : 'not refused';
      outcomes[key] = (outcomes[key] ?? 0) + 1;
    }
    return {
      clients: CLIENTS,
      declaredBytes: declared,
      sentBytes: sent,
      rssBeforeMb,
      rssPeakMb: round(rssPeakMb),
      rssEndMb,
      refused: answers.length,
      outcomes,
      refusedMs:
        times.length === 0
          ? undefined
          : { p50: round(percentile(times, 0.5)), max: round(Math.max(...times)) },
    };
  } finally {
    await target.pool.close();
    await target.bot.stop();
    await target.slack.close();
  }
}

const mib = (bytes: number) => round(bytes / 2 ** 20, 2);
const row = (name: string, r: Round) =>
  `| ${name} | ${r.clients} × ${mib(r.sentBytes)} of ${mib(r.declaredBytes)} MiB | ${r.rssBeforeMb} | ${r.rssPeakMb} | ${r.rssEndMb} | ${r.refused}/${r.clients} ${JSON.stringify(r.outcomes)} | ${r.refusedMs ? `${r.refusedMs.p50} / ${r.refusedMs.max}` : '—'} |`;

const sandbox = await Sandbox.start(0);
const now = () => String(Math.floor(Date.now() / 1000));
const json = { 'content-type': 'application/json' };
try {
  const unsigned = await stalledRound(
    sandbox,
    () => ({ ...json, 'x-slack-request-timestamp': now() }),
    UNSIGNED_BYTES,
  );
  const forged = await stalledRound(
    sandbox,
    () => ({ ...json, 'x-slack-request-timestamp': now(), 'x-slack-signature': `v0=${'0'.repeat(64)}` }),
    MAX_BODY_BYTES,
  );
  console.log(
    [
      `Half-sent requests to /slack/events, all at once, each round on a fresh bot, waited on for up to ${WAIT_MS / 1000} s\n`,
      '| round | sent | RSS before (MB) | RSS peak (MB) | RSS at the end (MB) | refused (answers) | time to refusal p50 / max (ms) |',
      '|---|---|--:|--:|--:|---|--:|',
      row('unsigned', unsigned),
      row('forged signature', forged),
      '',
    ].join('\n'),
  );
  console.log(JSON.stringify({ date: new Date().toISOString(), unsigned, forged }, null, 2));
} finally {
  await sandbox.close();
}
