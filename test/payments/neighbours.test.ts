import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CircuitBreaker,
  type Connections,
  createPaymentsClient,
  type InvoiceId,
  isPaymentError,
  openConnections,
  type PaymentsClient,
  parseInvoiceId,
  quietReserve,
} from '../../src/payments/index.js';
import { DEMO_BALANCES, demoInvoices, type WireInvoice } from '../../src/sandbox/data.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';

/**
 * Issue 28, point 4, scaled down ten times: a service answering every call in 450 ms (4.5 s),
 * a deadline of 800 ms (8 s), PAYMENT_API_CONCURRENCY 32, and the connections opened as
 * src/main.ts opens them in many-workspaces mode.
 */
const SERVICE_MS = 450;
const TIMEOUT_MS = 800;
const CONCURRENCY = 32;
const BURST = 64;

let sandbox: Sandbox;
const busyKeys = ['busy-merchant-a-key-0001', 'busy-merchant-b-key-0002'] as const;
const quietKey = 'quiet-merchant-c-key-0003';
const burstOf = new Map<string, InvoiceId[]>();

beforeAll(async () => {
  sandbox = await startSandbox({ latencyMs: SERVICE_MS });
  const template = demoInvoices(sandbox.payUrl)[0] as WireInvoice;
  for (const key of busyKeys) {
    const invoices = Array.from({ length: BURST }, () => ({ ...template, id: randomUUID() }));
    sandbox.addMerchant(key, { balances: DEMO_BALANCES, invoices });
    burstOf.set(
      key,
      invoices.flatMap((i) => parseInvoiceId(i.id) ?? []),
    );
  }
  sandbox.addMerchant(quietKey, { balances: DEMO_BALANCES, invoices: [] });
});
afterAll(() => sandbox.close());

/**
 * Workspaces' clients on one process's connections, with the breaker they share; `maxWaitMs`, the
 * wait for a connection allowed, is the client's default unless given.
 */
function process(manyKeys: boolean, maxWaitMs?: number) {
  const connections: Connections = openConnections({
    apiUrl: sandbox.url,
    timeoutMs: TIMEOUT_MS,
    concurrency: CONCURRENCY,
    background: { connections: 4, perKey: 4 },
    manyKeys,
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
      ...connections.interactive,
      timeoutMs: TIMEOUT_MS,
      ...(maxWaitMs === undefined ? {} : { maxWaitMs }),
      breaker,
      userAgent: 'payments-slack-bot/test',
    });
  return { connections, breaker, clientFor, opened: () => opened };
}

const outcome = (error: unknown) => (isPaymentError(error) ? error.code : String(error));

/** Every invoice of each busy key's burst asked at once; what each call ended with. */
const burst = (clientFor: (key: string) => PaymentsClient, keys: readonly string[]) =>
  keys.flatMap((key) => {
    const client = clientFor(key);
    return (burstOf.get(key) ?? []).map((id) => client.getInvoice(id).then(() => 'ok', outcome));
  });

function tally(results: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of results) counts[r] = (counts[r] ?? 0) + 1;
  return counts;
}

describe('two workspaces bursting beside a third', () => {
  it('answers the third workspace’s one /balance in about one service time, and the breaker stays closed', async () => {
    sandbox.reset();
    const { connections, breaker, clientFor, opened } = process(true);
    try {
      const busy = burst(clientFor, busyKeys);
      await sleep(20);
      const asked = performance.now();
      const balance = await clientFor(quietKey)
        .getBalance()
        .then(() => 'ok', outcome);
      const waited = performance.now() - asked;
      await Promise.all(busy);
      expect(balance).toBe('ok');
      // Before issue 28 it queued behind the others' calls and was told "not answering" after the deadline.
      expect(waited).toBeLessThan(SERVICE_MS + 250);
      expect(opened()).toBe(0);
      expect(breaker.state()).toBe('closed');
    } finally {
      await connections.destroy();
    }
  });

  it('answers every call of the busy workspaces too, later: none told "did not answer in time" or "not answering"', async () => {
    sandbox.reset();
    const { connections, breaker, clientFor, opened } = process(true);
    try {
      const told = tally(await Promise.all(burst(clientFor, busyKeys)));
      expect(told).toEqual({ ok: 2 * BURST });
      expect(sandbox.requests).toHaveLength(2 * BURST);
      expect(opened()).toBe(0);
      expect(breaker.state()).toBe('closed');
    } finally {
      await connections.destroy();
    }
  });

  it('tells a call that got no connection within the wait allowed "busy": nothing sent for it, the breaker told nothing', async () => {
    sandbox.reset();
    const { connections, breaker, clientFor, opened } = process(true, TIMEOUT_MS);
    try {
      const told = tally(await Promise.all(burst(clientFor, busyKeys)));
      // A first and a second round were sent (the second waited 450 ms of the 800 allowed) and
      // answered; the others were not sent.
      const held = CONCURRENCY - quietReserve(CONCURRENCY);
      expect(Object.keys(told).sort()).toEqual(['busy', 'ok']);
      expect(told.ok).toBe(sandbox.requests.length);
      expect(told.ok).toBeGreaterThanOrEqual(2 * held);
      expect(told.ok).toBeLessThanOrEqual(2 * CONCURRENCY);
      expect(opened()).toBe(0);
      expect(breaker.state()).toBe('closed');
    } finally {
      await connections.destroy();
    }
  });
});

describe('background work of many workspaces', () => {
  it('never times out a check for waiting on a connection, so watches do not pause for everyone', async () => {
    sandbox.reset();
    const connections = openConnections({
      apiUrl: sandbox.url,
      timeoutMs: TIMEOUT_MS,
      concurrency: CONCURRENCY,
      background: { connections: 4, perKey: 4 },
      manyKeys: true,
    });
    const breaker = new CircuitBreaker({ threshold: 1, openMs: 60_000 });
    try {
      // Two keys' checks, four at once each, and a third key's: nine through four connections,
      // the last waiting 900 ms for one, longer than the deadline.
      const client = (apiKey: string) =>
        createPaymentsClient({
          baseUrl: sandbox.url,
          apiKey,
          ...connections.interactive,
          background: { ...connections.background, pace: async () => true },
          timeoutMs: TIMEOUT_MS,
          breaker,
          userAgent: 'payments-slack-bot/test',
        });
      const checks = busyKeys.flatMap((key) => {
        const c = client(key);
        const ids = (burstOf.get(key) ?? []).slice(0, 4);
        return ids.map((id) => c.getInvoice(id, { background: true }).then(() => 'ok', outcome));
      });
      checks.push(
        client(quietKey)
          .getBalance({ background: true })
          .then(() => 'ok', outcome),
      );
      expect(tally(await Promise.all(checks))).toEqual({ ok: 9 });
      expect(sandbox.requests).toHaveLength(9);
      expect(breaker.state()).toBe('closed');
    } finally {
      await connections.destroy();
    }
  });
});

describe('one workspace alone', () => {
  it('has every connection at once when it is the only key', async () => {
    sandbox.reset();
    const { connections, clientFor } = process(false);
    try {
      const calls = burst(clientFor, busyKeys.slice(0, 1));
      await sleep(SERVICE_MS / 2);
      expect(sandbox.requests).toHaveLength(CONCURRENCY);
      await Promise.all(calls);
    } finally {
      await connections.destroy();
    }
  });
});

describe('what the breaker is told', () => {
  /** A client whose background budget is `pace`, its breaker opening after `threshold` unanswered calls. */
  function paced(pace: () => Promise<boolean>, threshold: number) {
    const { connections } = process(false);
    const breaker = new CircuitBreaker({ threshold, openMs: 60_000 });
    const client = createPaymentsClient({
      baseUrl: sandbox.url,
      apiKey: quietKey,
      ...connections.interactive,
      background: { ...connections.background, pace },
      timeoutMs: 100,
      retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 },
      breaker,
      userAgent: 'payments-slack-bot/test',
    });
    return { connections, breaker, client };
  }

  it('does not count a call that never reached the service: its turn in the budget came after its deadline', async () => {
    sandbox.reset();
    sandbox.setLatency(0);
    // A pace that does not heed the deadline: its turn comes, but after the deadline.
    const { connections, breaker, client } = paced(() => sleep(200, true), 1);
    try {
      await expect(client.getBalance({ background: true })).rejects.toMatchObject({ code: 'timeout' });
      expect(sandbox.requests).toHaveLength(0);
      // The next person is answered, not told the service is not answering.
      expect(breaker.state()).toBe('closed');
      await expect(client.getBalance()).resolves.toHaveLength(DEMO_BALANCES.length);
    } finally {
      sandbox.setLatency(SERVICE_MS);
      await connections.destroy();
    }
  });

  it('does not take a call its budget could not start (the store unreachable) as an answer that hides an outage', async () => {
    sandbox.reset();
    sandbox.setLatency(0);
    const { connections, breaker, client } = paced(() => Promise.reject(new Error('store unreachable')), 2);
    try {
      sandbox.failNext({ kind: 'status', status: 503 }, 2);
      await expect(client.getBalance()).rejects.toMatchObject({ code: 'service_unavailable' });
      await expect(client.getBalance({ background: true })).rejects.toThrow('store unreachable');
      await expect(client.getBalance()).rejects.toMatchObject({ code: 'service_unavailable' });
      // Two calls in a row reached the service and got no answer: it is not answering.
      expect(breaker.state()).toBe('open');
      await expect(client.getBalance()).rejects.toMatchObject({ code: 'service_down' });
    } finally {
      sandbox.setLatency(SERVICE_MS);
      await connections.destroy();
    }
  });
});
