/**
 * What two busy workspaces cost a third (issue 28, point 4), at the level of the payments
 * clients as src/main.ts builds them in many-workspaces mode: one breaker, one connection pool
 * of PAYMENT_API_CONCURRENCY to the service, one client per key. A sandbox service answers every
 * call after BENCH_SERVICE_MS; two keys each send a burst of BENCH_BURST invoice reads at once,
 * and BENCH_QUIET_AFTER_MS later a third key asks for its balance once. Prints how long the
 * third key waited and what it was told, what the busy keys were told, and whether the breaker
 * opened (the service answered every request it received).
 *
 * Run: npx tsx bench/neighbours.ts. Options (environment): BENCH_SERVICE_MS (default 4500),
 * BENCH_BURST (default 64), BENCH_TIMEOUT_MS (PAYMENT_API_TIMEOUT_MS, default 8000),
 * BENCH_CONCURRENCY (PAYMENT_API_CONCURRENCY, default 32), BENCH_QUIET_AFTER_MS (default 100),
 * BENCH_WIRING: `fair` (default: the connections as src/main.ts opens them, `openConnections`)
 * or `per-key` (as before issue 28: one pool, and each key's own limit of PAYMENT_API_CONCURRENCY
 * calls, so the keys together ask the pool for more connections than it has).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CircuitBreaker,
  createPaymentsClient,
  isPaymentError,
  openConnections,
  type PaymentsClient,
  parseInvoiceId,
} from '../src/payments/index.js';
import { DEMO_BALANCES, demoInvoices, type WireInvoice } from '../src/sandbox/data.js';
import { startSandbox } from '../src/sandbox/server.js';

const SERVICE_MS = Number(process.env.BENCH_SERVICE_MS ?? 4500);
const BURST = Number(process.env.BENCH_BURST ?? 64);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MS ?? 8000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const QUIET_AFTER_MS = Number(process.env.BENCH_QUIET_AFTER_MS ?? 100);
const WIRING = process.env.BENCH_WIRING === 'per-key' ? 'per-key' : 'fair';

const sandbox = await startSandbox({ latencyMs: SERVICE_MS });
const template = demoInvoices(sandbox.payUrl)[0] as WireInvoice;
const invoicesOf = (n: number): WireInvoice[] =>
  Array.from({ length: n }, () => ({ ...template, id: randomUUID() }));
const busyKeys = ['busy-merchant-a-key-0001', 'busy-merchant-b-key-0002'];
const quietKey = 'quiet-merchant-c-key-0003';
const bursts = busyKeys.map((key) => {
  const invoices = invoicesOf(BURST);
  sandbox.addMerchant(key, { balances: DEMO_BALANCES, invoices });
  return { key, ids: invoices.map((i) => parseInvoiceId(i.id)).filter((id) => id !== undefined) };
});
sandbox.addMerchant(quietKey, { balances: DEMO_BALANCES, invoices: [] });

// As src/main.ts in many-workspaces mode: one breaker for the origin, one pool of CONCURRENCY.
const connections = openConnections({
  apiUrl: sandbox.url,
  timeoutMs: TIMEOUT_MS,
  concurrency: CONCURRENCY,
  background: { connections: 8, perKey: 4 },
  manyKeys: true,
});
const breaker = new CircuitBreaker();
let opened = 0;
breaker.onChange((state) => {
  if (state === 'open') opened += 1;
});
const clientFor = (apiKey: string): PaymentsClient =>
  createPaymentsClient({
    baseUrl: sandbox.url,
    apiKey,
    ...(WIRING === 'fair'
      ? connections.interactive
      : { dispatcher: connections.interactive.dispatcher, concurrency: CONCURRENCY }),
    timeoutMs: TIMEOUT_MS,
    breaker,
    userAgent: 'bench/neighbours',
  });

const outcome = (error: unknown) => (isPaymentError(error) ? error.code : String(error));
const started = performance.now();
const busy = bursts.flatMap(({ key, ids }) => {
  const client = clientFor(key);
  return ids.map((id) =>
    client.getInvoice(id).then(
      () => ({ told: 'ok', ms: performance.now() - started }),
      (error: unknown) => ({ told: outcome(error), ms: performance.now() - started }),
    ),
  );
});
await sleep(QUIET_AFTER_MS);
const quietStarted = performance.now();
const quiet = await clientFor(quietKey)
  .getBalance()
  .then(() => 'ok', outcome);
const quietMs = performance.now() - quietStarted;
const told = new Map<string, number>();
const busyResults = await Promise.all(busy);
for (const { told: result } of busyResults) told.set(result, (told.get(result) ?? 0) + 1);
const answeredMs = busyResults
  .filter((r) => r.told === 'ok')
  .map((r) => r.ms)
  .sort((a, b) => a - b);
const totalMs = performance.now() - started;

const result = {
  settings: {
    wiring: WIRING,
    serviceMs: SERVICE_MS,
    burst: BURST,
    timeoutMs: TIMEOUT_MS,
    concurrency: CONCURRENCY,
  },
  quiet: { result: quiet, ms: Math.round(quietMs) },
  busy: Object.fromEntries(told),
  busyAnsweredMs: {
    first: Math.round(answeredMs[0] ?? 0),
    median: Math.round(answeredMs[Math.floor(answeredMs.length / 2)] ?? 0),
    last: Math.round(answeredMs.at(-1) ?? 0),
  },
  breakerOpened: opened,
  breakerNow: breaker.state(),
  requestsReceived: sandbox.requests.length,
  totalMs: Math.round(totalMs),
};
console.log(
  `third workspace's /balance: ${quiet} after ${result.quiet.ms} ms; busy keys told ${JSON.stringify(result.busy)} ` +
    `(answers after ${JSON.stringify(result.busyAnsweredMs)} ms); ` +
    `breaker opened ${opened}× (now ${result.breakerNow}); service received ${result.requestsReceived} calls`,
);
console.log(JSON.stringify(result));
await connections.destroy();
await sandbox.close();
