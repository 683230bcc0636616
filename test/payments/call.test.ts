import { Pool } from 'undici';
import { describe, expect, it } from 'vitest';
import {
  type CallReport,
  CircuitBreaker,
  createPaymentsClient,
  isPaymentError,
} from '../../src/payments/index.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { useSandboxClient } from '../support/sandbox-client.js';

/**
 * One call's way through the breaker, its deadline, its backoff and its budget, as the person
 * waiting for it (what the call ends with, and when) and the operator (onCall) see it.
 */

const NO_RETRY = { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 };

const service = useSandboxClient({ retry: NO_RETRY });

/** How a call ended: `ok`, or its error's code. */
const outcome = (call: Promise<unknown>): Promise<string> =>
  call.then(
    () => 'ok',
    (error: unknown) => (isPaymentError(error) ? error.code : String(error)),
  );

/** A budget whose first turn comes only when the test says so; later turns come at once. */
function heldBudget() {
  let letGo = () => {};
  const first = new Promise<boolean>((resolve) => {
    letGo = () => resolve(true);
  });
  let turns = 0;
  const pace = () => {
    turns += 1;
    return turns === 1 ? first : Promise.resolve(true);
  };
  return { pace, letGo: () => letGo() };
}

describe('when the service is found down', () => {
  it('lets go a call already waiting on it at once, and stays open', async () => {
    const breaker = new CircuitBreaker({ threshold: 1, openMs: 60_000 });
    const c = service.client({ breaker });
    service.sandbox.failNext({ kind: 'hang' });
    service.sandbox.failNext({ kind: 'status', status: 503 });
    const started = performance.now();
    const hanging = outcome(c.getInvoice(DEMO_INVOICE_IDS.open));
    await expect.poll(() => service.sandbox.requests.length).toBe(1);
    expect(await outcome(c.getBalance())).toBe('service_unavailable');
    // Not the 2 s deadline: the call on the service that stopped answering is let go with the outage.
    expect(await hanging).toBe('service_down');
    expect(performance.now() - started).toBeLessThan(1000);
    // The call it let go was no answer: the breaker is still open, and the next call makes none.
    expect(breaker.state()).toBe('open');
    expect(await outcome(c.getInvoice(DEMO_INVOICE_IDS.paid))).toBe('service_down');
    expect(service.sandbox.requests).toHaveLength(2);
  });

  it('tells a person at once while the probe is out, rather than queueing them behind it', async () => {
    let now = 0;
    const breaker = new CircuitBreaker({ threshold: 1, openMs: 1000, now: () => now });
    const c = service.client({ breaker, concurrency: 1 });
    service.sandbox.failNext({ kind: 'status', status: 503 });
    expect(await outcome(c.getBalance())).toBe('service_unavailable');
    now = 1000;
    service.sandbox.failNext({ kind: 'slow', ms: 200 });
    const order: string[] = [];
    const probe = outcome(c.getInvoice(DEMO_INVOICE_IDS.open)).then((r) => order.push(`probe ${r}`));
    const other = outcome(c.getInvoice(DEMO_INVOICE_IDS.paid)).then((r) => order.push(`other ${r}`));
    await Promise.all([probe, other]);
    expect(order).toEqual(['other service_down', 'probe ok']);
    expect(service.sandbox.requests.map((r) => r.path)).toEqual([
      '/api/v2/balance',
      `/api/v2/invoice/${DEMO_INVOICE_IDS.open}`,
    ]);
  });

  it('refuses a background call whose turn came while the probe was out, sending nothing for it', async () => {
    let now = 0;
    const breaker = new CircuitBreaker({ threshold: 1, openMs: 1000, now: () => now });
    const budget = heldBudget();
    const c = service.client({
      breaker,
      background: { dispatcher: service.pool, pace: budget.pace, concurrency: 1 },
    });
    // The lane's one turn is taken by a check waiting for its budget when the outage begins.
    const first = outcome(c.getInvoice(DEMO_INVOICE_IDS.open, { background: true }));
    service.sandbox.failNext({ kind: 'status', status: 503 });
    expect(await outcome(c.getBalance())).toBe('service_unavailable');
    now = 1000;
    const second = outcome(c.getInvoice(DEMO_INVOICE_IDS.paid, { background: true }));
    service.sandbox.failNext({ kind: 'slow', ms: 150 });
    const probe = outcome(c.getBalance());
    budget.letGo();
    expect(await first).toBe('service_down');
    expect(await second).toBe('service_down');
    expect(await probe).toBe('ok');
    expect(service.sandbox.requests.map((r) => r.path)).toEqual(['/api/v2/balance', '/api/v2/balance']);
  });

  it('lets a background call that waited out the outage for its turn go once the service answers again', async () => {
    let now = 0;
    const breaker = new CircuitBreaker({ threshold: 1, openMs: 1000, now: () => now });
    const budget = heldBudget();
    const c = service.client({
      breaker,
      background: { dispatcher: service.pool, pace: budget.pace, concurrency: 1 },
    });
    const first = outcome(c.getInvoice(DEMO_INVOICE_IDS.open, { background: true }));
    service.sandbox.failNext({ kind: 'status', status: 503 });
    expect(await outcome(c.getBalance())).toBe('service_unavailable');
    now = 1000;
    const second = outcome(c.getInvoice(DEMO_INVOICE_IDS.paid, { background: true }));
    // The probe is answered: the breaker closes while the second check still waits for its turn.
    expect(await outcome(c.getBalance())).toBe('ok');
    expect(breaker.state()).toBe('closed');
    budget.letGo();
    expect(await first).toBe('service_down');
    expect(await second).toBe('ok');
    expect(service.sandbox.requests.at(-1)?.path).toBe(`/api/v2/invoice/${DEMO_INVOICE_IDS.paid}`);
  });

  it('stops waiting out a Retry-After the moment another call finds the service down', async () => {
    const breaker = new CircuitBreaker({ threshold: 1, openMs: 60_000 });
    const gone = await startSandbox();
    const goneUrl = gone.url;
    await gone.close();
    const gonePool = new Pool(goneUrl);
    try {
      // Another merchant's client of the same service, which finds nothing listening.
      const other = createPaymentsClient({
        baseUrl: goneUrl,
        apiKey: 'another-merchant-key',
        dispatcher: gonePool,
        userAgent: 'payments-slack-bot/test',
        timeoutMs: 2000,
        retry: NO_RETRY,
        breaker,
      });
      service.sandbox.failNext({ kind: 'status', status: 429, headers: { 'retry-after': '1' } });
      const c = service.client({
        breaker,
        timeoutMs: 5000,
        retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 1 },
        // Its backoff of one second has begun; 100 ms into it, the other call fails.
        logger: {
          warn: () => {
            setTimeout(() => void outcome(other.getBalance()), 100);
          },
        },
      });
      const started = performance.now();
      expect(await outcome(c.getBalance())).toBe('service_down');
      const elapsed = performance.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(90);
      expect(elapsed).toBeLessThan(700);
      expect(service.sandbox.requests).toHaveLength(1);
    } finally {
      await gonePool.close();
    }
  });
});

describe('what onCall is told', () => {
  it('counts one attempt when the deadline ends the call during its backoff, and takes no second turn of the budget', async () => {
    const reports: CallReport[] = [];
    let turns = 0;
    const c = service.client({
      timeoutMs: 100,
      retry: { maxRetries: 2, baseDelayMs: 10, maxDelayMs: 10 },
      onCall: (r) => reports.push(r),
      background: {
        dispatcher: service.pool,
        pace: async () => {
          turns += 1;
          return true;
        },
      },
      retryEnvironment: {
        now: () => 0,
        random: () => 0.5,
        // A backoff that only the deadline ends.
        sleep: (_ms, signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', reject)),
      },
    });
    service.sandbox.failNext({ kind: 'status', status: 503 });
    expect(await outcome(c.getInvoice(DEMO_INVOICE_IDS.open, { background: true }))).toBe('timeout');
    expect(reports.map(({ result, attempts }) => `${result} ${attempts}`)).toEqual(['timeout 1']);
    expect(turns).toBe(1);
    expect(service.sandbox.requests).toHaveLength(1);
  });

  it('makes no call its budget had no turn for, and says so: busy, nothing sent, the breaker told nothing', async () => {
    const reports: CallReport[] = [];
    const breaker = new CircuitBreaker({ threshold: 1, openMs: 60_000 });
    const c = service.client({
      timeoutMs: 50,
      breaker,
      onCall: (r) => reports.push(r),
      background: {
        dispatcher: service.pool,
        // Every turn would be late: the pace gives up when the call's deadline ends.
        pace: (deadline) =>
          new Promise((resolve) => deadline.addEventListener('abort', () => resolve(false))),
      },
    });
    expect(await outcome(c.getInvoice(DEMO_INVOICE_IDS.open, { background: true }))).toBe('busy');
    expect(reports.map(({ result, attempts }) => `${result} ${attempts}`)).toEqual(['busy 0']);
    expect(service.sandbox.requests).toHaveLength(0);
    expect(breaker.state()).toBe('closed');
  });

  it('ends a retry its budget had no turn for with the failure it was retrying', async () => {
    const reports: CallReport[] = [];
    let turns = 0;
    const c = service.client({
      retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 1 },
      onCall: (r) => reports.push(r),
      background: {
        dispatcher: service.pool,
        pace: async () => {
          turns += 1;
          return turns === 1;
        },
      },
    });
    service.sandbox.failNext({ kind: 'status', status: 503 });
    expect(await outcome(c.getInvoice(DEMO_INVOICE_IDS.open, { background: true }))).toBe(
      'service_unavailable',
    );
    expect(reports.map(({ result, attempts }) => `${result} ${attempts}`)).toEqual(['service_unavailable 1']);
    expect(turns).toBe(2);
    expect(service.sandbox.requests).toHaveLength(1);
  });

  it('is told nothing of a call its budget could not start (the store unreachable)', async () => {
    const reports: CallReport[] = [];
    const c = service.client({
      onCall: (r) => reports.push(r),
      background: { dispatcher: service.pool, pace: () => Promise.reject(new Error('store unreachable')) },
    });
    await expect(c.getInvoice(DEMO_INVOICE_IDS.open, { background: true })).rejects.toThrow(
      'store unreachable',
    );
    expect(reports).toEqual([]);
  });
});

describe('the default retry policy, with its clock, dice and sleep replaced', () => {
  it('tries three times in all, backing off half of 200 ms then of 400 ms at a roll of 0.5', async () => {
    const sleeps: number[] = [];
    service.sandbox.failNext({ kind: 'status', status: 503 }, 3);
    const c = createPaymentsClient({
      baseUrl: service.sandbox.url,
      apiKey: service.sandbox.apiKey,
      dispatcher: service.pool,
      userAgent: 'payments-slack-bot/test',
      timeoutMs: 5000,
      retryEnvironment: {
        now: () => 0,
        random: () => 0.5,
        sleep: async (ms) => {
          sleeps.push(ms);
        },
      },
    });
    expect(await outcome(c.getBalance())).toBe('service_unavailable');
    expect(sleeps).toEqual([100, 200]);
    expect(service.sandbox.requests).toHaveLength(3);
  });
});

describe('the log', () => {
  it('names the invoice call in the warning of its retry', async () => {
    const warnings: [object, string][] = [];
    service.sandbox.failNext({ kind: 'status', status: 502 });
    const c = service.client({
      retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 1 },
      logger: { warn: (fields, message) => warnings.push([fields, message]) },
    });
    expect(await outcome(c.getInvoice(DEMO_INVOICE_IDS.open))).toBe('ok');
    expect(warnings).toEqual([
      [
        {
          operation: 'invoice',
          attempt: 1,
          code: 'service_unavailable',
          status: 502,
          delayMs: expect.any(Number),
        },
        'payment service call failed, retrying',
      ],
    ]);
  });
});
