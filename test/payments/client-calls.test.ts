import { Pool } from 'undici';
import { describe, expect, it } from 'vitest';
import type { CallReport, UnexpectedResponseError } from '../../src/payments/index.js';
import { Pacer } from '../../src/payments/pacer.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { invoiceId } from '../support/factories.js';
import { failure, useFastRetryService } from './client-setup.js';

/** The payments client's calls: single flight, its queue, the background budget and what each call reports. */

const service = useFastRetryService();

describe('single flight', () => {
  it('shares one upstream call among concurrent identical requests', async () => {
    service.sandbox.setLatency(100);
    try {
      const c = service.client();
      const results = await Promise.all(Array.from({ length: 50 }, () => c.getBalance()));
      expect(new Set(results).size).toBe(1);
      expect(service.sandbox.requests).toHaveLength(1);
    } finally {
      service.sandbox.setLatency(0);
    }
  });

  it('shares the failure too, and calls again once it has settled (no caching)', async () => {
    const c = service.client();
    service.sandbox.failNext({ kind: 'status', status: 500 });
    const errors = await Promise.allSettled([c.getBalance(), c.getBalance()]);
    expect(errors.map((e) => e.status)).toEqual(['rejected', 'rejected']);
    await c.getBalance();
    await c.getBalance();
    expect(service.sandbox.requests).toHaveLength(3);
  });

  it('keeps different invoices apart, and the same invoice together', async () => {
    service.sandbox.setLatency(50);
    try {
      const c = service.client();
      await Promise.all([
        c.getInvoice(DEMO_INVOICE_IDS.open),
        c.getInvoice(invoiceId(DEMO_INVOICE_IDS.open.toUpperCase())),
        c.getInvoice(DEMO_INVOICE_IDS.paid),
      ]);
      expect(service.sandbox.requests.map((r) => r.path).sort()).toEqual([
        `/api/v2/invoice/${DEMO_INVOICE_IDS.open}`,
        `/api/v2/invoice/${DEMO_INVOICE_IDS.paid}`,
      ]);
    } finally {
      service.sandbox.setLatency(0);
    }
  });
});

describe('more callers than the service takes at once', () => {
  it('starts each call’s deadline at its turn, so a slow but healthy service never times out', async () => {
    const ids = Object.values(DEMO_INVOICE_IDS);
    service.sandbox.setLatency(150);
    const narrow = new Pool(service.sandbox.url, { connections: 1 });
    try {
      const c = service.client({ dispatcher: narrow, concurrency: 1, timeoutMs: 250 });
      const results = await Promise.allSettled(ids.map((id) => c.getInvoice(id)));
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    } finally {
      service.sandbox.setLatency(0);
      await narrow.close();
    }
  });

  it('refuses a call at once with BusyError when the queue is full, calling nothing for it', async () => {
    service.sandbox.setLatency(100);
    try {
      const c = service.client({ concurrency: 1, maxQueue: 1 });
      const [first, second, third] = await Promise.allSettled(
        Object.values(DEMO_INVOICE_IDS).map((id) => c.getInvoice(id)),
      );
      expect(first?.status).toBe('fulfilled');
      expect(second?.status).toBe('fulfilled');
      expect(third).toMatchObject({
        status: 'rejected',
        reason: { code: 'busy', name: 'BusyError', queued: 1 },
      });
      expect(service.sandbox.requests).toHaveLength(2);
    } finally {
      service.sandbox.setLatency(0);
    }
  });
});

describe('the background budget', () => {
  it('takes a turn from the pace before every background attempt, and none for a person’s call', async () => {
    const turns: number[] = [];
    const c = service.client({
      background: {
        dispatcher: service.pool,
        pace: async () => {
          turns.push(service.sandbox.requests.length);
          return true;
        },
      },
    });
    await c.getBalance();
    expect(turns).toEqual([]);
    service.sandbox.failNext({ kind: 'status', status: 503 }, 1);
    await c.getInvoice(DEMO_INVOICE_IDS.open, { background: true });
    // Before the first attempt, then before the retry.
    expect(turns).toEqual([1, 2]);
  });

  it('makes no call when the pace cannot be kept (its store unreachable), and says so as the store did', async () => {
    const c = service.client({
      background: {
        dispatcher: service.pool,
        pace: () => Promise.reject(new Error('store unreachable')),
      },
    });
    await expect(c.getInvoice(DEMO_INVOICE_IDS.open, { background: true })).rejects.toThrow(
      'store unreachable',
    );
    expect(service.sandbox.requests).toHaveLength(0);
  });
});

describe('what each call reports', () => {
  it('says how each call ended, on which lane, after how many attempts and how long', async () => {
    const reports: CallReport[] = [];
    const c = service.client({
      onCall: (r) => reports.push(r),
      background: { dispatcher: service.pool, pace: new Pacer(1000).take },
    });
    await c.getBalance();
    service.sandbox.failNext({ kind: 'status', status: 503 }, 1);
    await c.getInvoice(DEMO_INVOICE_IDS.open, { background: true });
    service.sandbox.failNext({ kind: 'status', status: 401, body: '{}' }, 1);
    await failure(c.getBalance());
    expect(reports.map(({ ms, ...r }) => r)).toEqual([
      { operation: 'balance', result: 'ok', background: false, attempts: 1 },
      { operation: 'invoice', result: 'ok', background: true, attempts: 2 },
      { operation: 'balance', result: 'invalid_api_key', background: false, attempts: 1 },
    ]);
    for (const { ms } of reports) {
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms).toBeLessThan(2000);
    }
  });

  it('reports nothing for a call it refuses before sending, and lets a bug through unreported', async () => {
    const reports: CallReport[] = [];
    await expect(service.client({ onCall: (r) => reports.push(r) }).getInvoice('x' as never)).rejects.toThrow(
      TypeError,
    );
    expect(reports).toEqual([]);
  });

  it('names the error for a body over the limit', async () => {
    service.sandbox.failNext({ kind: 'status', status: 200, body: `{"x":"${'a'.repeat(2 * 1024 * 1024)}"}` });
    const error = (await failure(service.client().getBalance())) as UnexpectedResponseError;
    expect(error.cause).toMatchObject({ name: 'BodyTooLargeError' });
  });

  it('joins a base address with trailing slashes to the API paths', async () => {
    await service.client({ baseUrl: `${service.sandbox.url}//` }).getBalance();
    expect(service.sandbox.requests.at(-1)?.path).toBe('/api/v2/balance');
  });
});
