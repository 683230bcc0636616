import { Pool } from 'undici';
import { describe, expect, it } from 'vitest';
import {
  type CallReport,
  CircuitBreaker,
  CircuitOpenError,
  InvalidApiKeyError,
  InvoiceNotFoundError,
  type PaymentError,
  ServiceUnavailableError,
} from '../../src/payments/index.js';
import { Pacer } from '../../src/payments/pacer.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { invoiceId } from '../support/factories.js';
import { FAST_RETRY, failure, useFastRetryService } from './client-setup.js';

/** The circuit breaker around the payment service. */

const service = useFastRetryService();

describe('the circuit breaker around the service', () => {
  const opensAfterOne = () => new CircuitBreaker({ threshold: 1, openMs: 60_000 });

  it('fails at once once the service stopped answering, calling nothing', async () => {
    const breaker = opensAfterOne();
    const c = service.client({ breaker, retry: { ...FAST_RETRY, maxRetries: 0 } });
    service.sandbox.failNext({ kind: 'status', status: 503 });
    expect(await failure(c.getBalance())).toBeInstanceOf(ServiceUnavailableError);
    const error = await failure(c.getInvoice(DEMO_INVOICE_IDS.open));
    expect(error).toBeInstanceOf(CircuitOpenError);
    expect(error).toMatchObject({ code: 'service_down', name: 'CircuitOpenError' });
    expect(service.sandbox.requests).toHaveLength(1);
  });

  it('lets go every call waiting for a turn when it opens, instead of making them wait', async () => {
    const breaker = opensAfterOne();
    const c = service.client({ breaker, concurrency: 1, timeoutMs: 300 });
    service.sandbox.failNext({ kind: 'hang' });
    const started = performance.now();
    const results = await Promise.allSettled(Object.values(DEMO_INVOICE_IDS).map((id) => c.getInvoice(id)));
    const elapsed = performance.now() - started;
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as PaymentError).code : 'ok'))).toEqual([
      'timeout',
      'service_down',
      'service_down',
    ]);
    // One deadline, not three in a row.
    expect(elapsed).toBeLessThan(800);
    expect(service.sandbox.requests).toHaveLength(1);
  });

  it('takes a rejected key or an unknown invoice as an answer: it never opens for them', async () => {
    const breaker = new CircuitBreaker({ threshold: 2 });
    const c = service.client({ breaker });
    service.sandbox.failNext({ kind: 'status', status: 401, body: '{}' }, 3);
    for (let i = 0; i < 3; i += 1) expect(await failure(c.getBalance())).toBeInstanceOf(InvalidApiKeyError);
    for (let i = 0; i < 3; i += 1)
      expect(await failure(c.getInvoice(invoiceId('aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee')))).toBeInstanceOf(
        InvoiceNotFoundError,
      );
    expect(breaker.state()).toBe('closed');
    await expect(c.getBalance()).resolves.toHaveLength(7);
  });

  it('is shared by the clients of one service: an outage fails every key, a rejected key fails only its own', async () => {
    const breaker = new CircuitBreaker({ threshold: 2, openMs: 60_000 });
    const merchantA = service.client({ breaker, retry: { ...FAST_RETRY, maxRetries: 0 } });
    const merchantB = service.client({
      breaker,
      apiKey: 'another-merchant-key',
      retry: { ...FAST_RETRY, maxRetries: 0 },
    });
    service.sandbox.failNext({ kind: 'status', status: 401, body: '{}' }, 2);
    await failure(merchantB.getBalance());
    await failure(merchantB.getBalance());
    await expect(merchantA.getBalance()).resolves.toHaveLength(7);
    service.sandbox.failNext({ kind: 'status', status: 502 }, 2);
    await failure(merchantA.getBalance());
    await failure(merchantA.getBalance());
    expect(await failure(merchantB.getBalance())).toBeInstanceOf(CircuitOpenError);
  });

  it('sends one probe when the open period ends; its answer lets everyone through again', async () => {
    let now = 0;
    const breaker = new CircuitBreaker({ threshold: 1, openMs: 1000, now: () => now });
    const c = service.client({ breaker, retry: { ...FAST_RETRY, maxRetries: 0 } });
    service.sandbox.failNext({ kind: 'status', status: 503 });
    await failure(c.getBalance());
    now = 1000;
    service.sandbox.setLatency(100);
    try {
      const [probe, other] = await Promise.allSettled([
        c.getInvoice(DEMO_INVOICE_IDS.open),
        c.getInvoice(DEMO_INVOICE_IDS.paid),
      ]);
      expect(probe.status).toBe('fulfilled');
      expect(other).toMatchObject({ status: 'rejected', reason: { code: 'service_down' } });
    } finally {
      service.sandbox.setLatency(0);
    }
    expect(breaker.state()).toBe('closed');
    await expect(c.getInvoice(DEMO_INVOICE_IDS.paid)).resolves.toBeDefined();
    expect(service.sandbox.requests).toHaveLength(3);
  });

  it('opens the background lane’s queue too', async () => {
    const breaker = opensAfterOne();
    const narrow = new Pool(service.sandbox.url, { connections: 1 });
    try {
      const c = service.client({
        breaker,
        timeoutMs: 300,
        background: { dispatcher: narrow, pace: new Pacer(1000).take, concurrency: 1 },
      });
      service.sandbox.failNext({ kind: 'hang' });
      const results = await Promise.allSettled([
        c.getInvoice(DEMO_INVOICE_IDS.open, { background: true }),
        c.getInvoice(DEMO_INVOICE_IDS.paid, { background: true }),
      ]);
      expect(results).toMatchObject([
        { status: 'rejected', reason: { code: 'timeout' } },
        { status: 'rejected', reason: { code: 'service_down' } },
      ]);
    } finally {
      await narrow.destroy();
    }
  });

  it('reports a refused call as service_down with no attempt', async () => {
    const reports: CallReport[] = [];
    const breaker = opensAfterOne();
    const c = service.client({
      breaker,
      onCall: (r) => reports.push(r),
      retry: { ...FAST_RETRY, maxRetries: 0 },
    });
    service.sandbox.failNext({ kind: 'status', status: 500 });
    await failure(c.getBalance());
    await failure(c.getBalance());
    expect(reports.map((r) => [r.result, r.attempts])).toEqual([
      ['service_unavailable', 1],
      ['service_down', 0],
    ]);
  });
});
