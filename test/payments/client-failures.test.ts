import { Pool } from 'undici';
import { describe, expect, it } from 'vitest';
import {
  type CallReport,
  createPaymentsClient,
  PaymentTimeoutError,
  RateLimitedError,
  ServiceError,
  ServiceUnavailableError,
  UnexpectedResponseError,
} from '../../src/payments/index.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { FAST_RETRY, failure, useFastRetryService } from './client-setup.js';

/** The payments client when the service fails: which failures it retries, inside one deadline, and how it reports them. */

const service = useFastRetryService();

describe('failures and retries', () => {
  it.each([502, 503, 504])('retries %i twice, then reports the service unavailable', async (status) => {
    service.sandbox.failNext({ kind: 'status', status }, 3);
    const error = await failure(service.client().getBalance());
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(error).toMatchObject({ code: 'service_unavailable', status });
    expect(error.message).toContain(`HTTP ${status}`);
    expect(service.sandbox.requests).toHaveLength(3);
  });

  it('succeeds when a retry does', async () => {
    service.sandbox.failNext({ kind: 'status', status: 503 });
    await expect(service.client().getBalance()).resolves.toHaveLength(7);
    expect(service.sandbox.requests).toHaveLength(2);
  });

  it('does not retry a 500', async () => {
    service.sandbox.failNext({ kind: 'status', status: 500 });
    expect(await failure(service.client().getBalance())).toBeInstanceOf(ServiceUnavailableError);
    expect(service.sandbox.requests).toHaveLength(1);
  });

  it('retries a reset connection, and reports it as unavailable with the cause kept', async () => {
    service.sandbox.failNext({ kind: 'reset' }, 3);
    const error = await failure(service.client().getBalance());
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(error.cause).toBeInstanceOf(Error);
    expect(service.sandbox.requests).toHaveLength(3);
  });

  it('reports a refused connection as unavailable', async () => {
    const closed = await startSandbox();
    const url = closed.url;
    await closed.close();
    const closedPool = new Pool(url);
    try {
      const error = await failure(
        createPaymentsClient({
          baseUrl: url,
          apiKey: 'k',
          dispatcher: closedPool,
          userAgent: 't',
          timeoutMs: 2000,
          retry: FAST_RETRY,
        }).getBalance(),
      );
      expect(error).toBeInstanceOf(ServiceUnavailableError);
      expect(error.message).toContain('ECONNREFUSED');
    } finally {
      await closedPool.close();
    }
  });

  it('retries 429, honouring a Retry-After that fits the deadline', async () => {
    service.sandbox.failNext({ kind: 'status', status: 429, headers: { 'retry-after': '0' } }, 2);
    await expect(service.client().getBalance()).resolves.toHaveLength(7);
    expect(service.sandbox.requests).toHaveLength(3);
  });

  it('gives up on 429 at once when Retry-After is beyond the deadline, and says when to retry', async () => {
    service.sandbox.failNext({ kind: 'status', status: 429, headers: { 'retry-after': '60' } });
    const error = await failure(service.client().getBalance());
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error).toMatchObject({ code: 'rate_limited', retryAfterMs: 60_000, status: 429 });
    expect(service.sandbox.requests).toHaveLength(1);
  });

  it('stops at the deadline when the service never answers', async () => {
    service.sandbox.failNext({ kind: 'hang' });
    const started = performance.now();
    const error = await failure(service.client({ timeoutMs: 300 }).getBalance());
    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(PaymentTimeoutError);
    expect(error).toMatchObject({ code: 'timeout', timeoutMs: 300 });
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(1500);
    expect(service.sandbox.requests).toHaveLength(1);
  });

  it('counts retries and their backoff inside the one deadline', async () => {
    service.sandbox.failNext({ kind: 'status', status: 503 });
    service.sandbox.failNext({ kind: 'hang' });
    const started = performance.now();
    const error = await failure(service.client({ timeoutMs: 400 }).getBalance());
    expect(error).toBeInstanceOf(PaymentTimeoutError);
    expect(performance.now() - started).toBeLessThan(1500);
    expect(service.sandbox.requests).toHaveLength(2);
  });

  it('does not sleep past the deadline: a backoff that cannot fit ends the call with the last error', async () => {
    service.sandbox.failNext({ kind: 'status', status: 503 }, 3);
    const slowRetry = { maxRetries: 2, baseDelayMs: 10_000, maxDelayMs: 10_000 };
    const started = performance.now();
    const error = await failure(service.client({ timeoutMs: 200, retry: { ...slowRetry } }).getBalance());
    // Backoff is random in [0, 10 s): either it fitted (and the next 503 came) or the call ended at once.
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('reports a 200 HTML page as an unexpected answer with a short snippet, without retrying', async () => {
    service.sandbox.failNext({ kind: 'html' });
    const error = await failure(service.client().getBalance());
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error).toMatchObject({ code: 'unexpected_response', status: 200 });
    expect((error as UnexpectedResponseError).bodySnippet).toContain('Welcome to nginx');
    expect(service.sandbox.requests).toHaveLength(1);
  });

  it('reports a body that breaks the schema with where it broke', async () => {
    service.sandbox.failNext({
      kind: 'status',
      status: 200,
      body: '{"status":"success","result":[{"id":"BTC","title":"Bitcoin","balance":"lots"}]}',
    });
    const error = (await failure(service.client().getBalance())) as UnexpectedResponseError;
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error.issues).toEqual(['result.0.balance: not a decimal number']);
  });

  it('keeps the snippet short whatever the body size, and refuses bodies over the limit', async () => {
    service.sandbox.failNext({ kind: 'status', status: 200, body: `<p>${'x'.repeat(10_000)}` });
    const short = (await failure(service.client().getBalance())) as UnexpectedResponseError;
    expect(short.bodySnippet.length).toBeLessThanOrEqual(200);

    service.sandbox.failNext({
      kind: 'status',
      status: 200,
      body: `{"result":[],"pad":"${'x'.repeat(5000)}"}`,
    });
    const large = await failure(service.client({ maxBodyBytes: 1000 }).getBalance());
    expect(large).toBeInstanceOf(UnexpectedResponseError);
    expect(large.message).toContain('larger than 1000 bytes');
  });

  it('maps any other status to ServiceError with the service name and message', async () => {
    service.sandbox.failNext({
      kind: 'status',
      status: 403,
      body: '{"status":403,"name":"ForbiddenError","message":"project is disabled","details":{}}',
    });
    const error = await failure(service.client().getBalance());
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({
      code: 'service_error',
      status: 403,
      serviceName: 'ForbiddenError',
      serviceMessage: 'project is disabled',
    });
    expect(service.sandbox.requests).toHaveLength(1);
  });

  it('maps a non-JSON error answer to ServiceError with its status', async () => {
    service.sandbox.failNext({ kind: 'status', status: 404, body: 'Not Found' });
    const error = await failure(service.client().getBalance());
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ status: 404, serviceName: undefined });
  });
});

describe('times in the answer', () => {
  it('reads a time with a UTC offset as the instant it names', async () => {
    service.sandbox.updateInvoice(DEMO_INVOICE_IDS.open, { createdAt: '2026-11-21T14:00:00+02:00' });
    const invoice = await service.client().getInvoice(DEMO_INVOICE_IDS.open);
    expect(invoice.createdAt.toISOString()).toBe('2026-11-21T12:00:00.000Z');
  });

  it('names the whole body as where it broke when the body is not even an object', async () => {
    service.sandbox.failNext({ kind: 'status', status: 200, body: '"all good"' });
    const error = (await failure(service.client().getBalance())) as UnexpectedResponseError;
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]).toMatch(/^\(root\): /);
  });

  it('reports a call refused for a full queue as busy, after no attempt', async () => {
    const reports: CallReport[] = [];
    service.sandbox.setLatency(50);
    try {
      const c = service.client({ concurrency: 1, maxQueue: 1, onCall: (r) => reports.push(r) });
      await Promise.allSettled(Object.values(DEMO_INVOICE_IDS).map((id) => c.getInvoice(id)));
    } finally {
      service.sandbox.setLatency(0);
    }
    expect(reports.map(({ result, attempts }) => `${result} ${attempts}`)).toEqual([
      'busy 0',
      'ok 1',
      'ok 1',
    ]);
  });

  it('takes only a 2xx as an answer: a 300 is a service error', async () => {
    service.sandbox.failNext({ kind: 'status', status: 300, body: '{}' });
    const error = await failure(service.client().getBalance());
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ status: 300 });
    expect(service.sandbox.requests.map((r) => r.method)).toEqual(['GET']);
  });

  it('keeps what the deadline interrupted as the cause of the timeout', async () => {
    service.sandbox.failNext({ kind: 'hang' });
    const error = await failure(service.client({ timeoutMs: 50 }).getBalance());
    expect(error).toBeInstanceOf(PaymentTimeoutError);
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('does not start a backoff that would end exactly at the deadline', async () => {
    service.sandbox.failNext({ kind: 'status', status: 503 });
    const sleeps: number[] = [];
    const error = await failure(
      service
        .client({
          retry: { maxRetries: 2, baseDelayMs: 2000, maxDelayMs: 10_000 },
          timeoutMs: 1000,
          retryEnvironment: {
            random: () => 0.5, // a first backoff of 1000 ms: all the time there is
            now: () => 0,
            sleep: async (ms) => {
              sleeps.push(ms);
            },
          },
        })
        .getBalance(),
    );
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(sleeps).toEqual([]);
  });
});
