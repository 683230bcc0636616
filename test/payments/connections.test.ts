import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type Connections,
  createPaymentsClient,
  isPaymentError,
  openConnections,
  type PaymentsClient,
} from '../../src/payments/index.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';

/** The process's pools to the service, as the clients of every key use them (src/main.ts). */

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
afterEach(() => {
  sandbox.reset();
  sandbox.setLatency(0);
});

function open(overrides: Partial<Parameters<typeof openConnections>[0]> = {}): Connections {
  return openConnections({
    apiUrl: sandbox.url,
    timeoutMs: 2000,
    concurrency: 4,
    background: { connections: 2, perKey: 2 },
    manyKeys: false,
    ...overrides,
  });
}

function clientOn(connections: Connections, apiKey = sandbox.apiKey, timeoutMs = 2000): PaymentsClient {
  return createPaymentsClient({
    baseUrl: sandbox.url,
    apiKey,
    ...connections.interactive,
    background: { ...connections.background, pace: async () => true },
    timeoutMs,
    retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 },
    userAgent: 'payments-slack-bot/test',
  });
}

const outcome = (call: Promise<unknown>): Promise<string> =>
  call.then(
    () => 'ok',
    (error: unknown) => (isPaymentError(error) ? error.code : String(error)),
  );

describe('stopping', () => {
  it('closes cleanly: calls under way are answered, and no call goes out afterwards', async () => {
    const connections = open();
    const c = clientOn(connections);
    sandbox.setLatency(100);
    const person = outcome(c.getBalance());
    const check = outcome(c.getInvoice(DEMO_INVOICE_IDS.open, { background: true }));
    await expect.poll(() => sandbox.requests.length).toBe(2);
    await connections.close();
    expect(await person).toBe('ok');
    expect(await check).toBe('ok');
    expect(await outcome(c.getBalance())).toBe('service_unavailable');
    expect(await outcome(c.getInvoice(DEMO_INVOICE_IDS.paid, { background: true }))).toBe(
      'service_unavailable',
    );
    expect(sandbox.requests).toHaveLength(2);
  });

  it('destroys at once: calls under way on either pool fail now, not at their deadline', async () => {
    const connections = open();
    const c = clientOn(connections);
    sandbox.failNext({ kind: 'hang' }, 2);
    const started = performance.now();
    const person = outcome(c.getBalance());
    const check = outcome(c.getInvoice(DEMO_INVOICE_IDS.open, { background: true }));
    await expect.poll(() => sandbox.requests.length).toBe(2);
    await connections.destroy();
    expect([await person, await check]).toEqual(['service_unavailable', 'service_unavailable']);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('the pools’ own bounds', () => {
  it('each pool gives up on a service that sends no headers within the timeout', async () => {
    const connections = open({ timeoutMs: 50 });
    try {
      sandbox.failNext({ kind: 'hang' }, 2);
      // The pools time out on a coarse clock (undici's, about a second); the race only bounds the test.
      const told = await Promise.all(
        [connections.interactive, connections.background].map((lane) =>
          Promise.race([
            lane.dispatcher.request({ origin: sandbox.url, path: '/api/v2/balance', method: 'GET' }).then(
              () => 'answered',
              (error: { code?: string }) => error.code,
            ),
            sleep(3000).then(() => 'still waiting'),
          ]),
        ),
      );
      expect(told).toEqual(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT']);
    } finally {
      await connections.destroy();
    }
  });
});

describe('background connections', () => {
  it('runs `perKey` of one key’s checks at once', async () => {
    const connections = open({ background: { connections: 4, perKey: 1 } });
    try {
      const c = clientOn(connections);
      sandbox.setLatency(100);
      let sentAtFirstAnswer = -1;
      const first = c.getInvoice(DEMO_INVOICE_IDS.open, { background: true }).then(() => {
        sentAtFirstAnswer = sandbox.requests.length;
      });
      const second = c.getInvoice(DEMO_INVOICE_IDS.paid, { background: true });
      await Promise.all([first, second]);
      expect(sentAtFirstAnswer).toBe(1);
    } finally {
      await connections.destroy();
    }
  });

  it('starts a key’s check when a connection is free, so waiting for one never eats its deadline', async () => {
    const connections = open({ background: { connections: 1, perKey: 1 }, timeoutMs: 250 });
    try {
      sandbox.setLatency(150);
      // Two keys' checks through one connection: the second waits 150 ms, then takes 150 of its 250.
      const [a, b] = await Promise.all([
        outcome(clientOn(connections, sandbox.apiKey, 250).getBalance({ background: true })),
        outcome(
          clientOn(connections, sandbox.apiKey, 250).getInvoice(DEMO_INVOICE_IDS.open, { background: true }),
        ),
      ]);
      expect([a, b]).toEqual(['ok', 'ok']);
    } finally {
      await connections.destroy();
    }
  });
});
