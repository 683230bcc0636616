import { inspect } from 'node:util';
import { stringify } from 'lossless-json';
import { Pool } from 'undici';
import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../src/payments/answers.js';
import {
  BusyError,
  type CallReport,
  CircuitBreaker,
  CircuitOpenError,
  createPaymentsClient,
  InvalidApiKeyError,
  InvoiceNotFoundError,
  type PaymentError,
  PaymentTimeoutError,
  RateLimitedError,
  ServiceError,
  ServiceUnavailableError,
  UnexpectedResponseError,
} from '../../src/payments/index.js';
import { Pacer } from '../../src/payments/pacer.js';
import { DEMO_INVOICE_IDS, demoInvoices, num } from '../../src/sandbox/data.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { invoiceId } from '../support/factories.js';
import { useSandboxClient } from '../support/sandbox-client.js';

const FAST_RETRY = { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 20 };

const service = useSandboxClient({ retry: FAST_RETRY });

/** The rejection of `promise`, or a failed test if it resolved. */
async function failure(promise: Promise<unknown>): Promise<PaymentError> {
  try {
    await promise;
  } catch (error) {
    return error as PaymentError;
  }
  throw new Error('expected the call to fail');
}

describe('getBalance', () => {
  it('returns each currency with its exact amount', async () => {
    const balance = await service.client().getBalance();
    expect(balance.map((b) => [b.id, b.title, b.balance.toString()])).toEqual([
      ['BTC', 'Bitcoin', '0.0123456'],
      ['USDT-TRC20', 'Tether (TRC-20)', '1520.5'],
      ['ETH', 'Ethereum', '0'],
      ['ETC', 'Ethereum Classic', '12'],
      ['LTC', 'Litecoin', '0.0000001'],
      ['TRX', 'TRON', '0'],
      ['DOGE', 'Dogecoin', '4200.75'],
    ]);
  });

  it('sends the key as "Token <key>", asks for JSON and names itself', async () => {
    await service.client().getBalance();
    expect(service.sandbox.requests).toEqual([
      {
        method: 'GET',
        path: '/api/v2/balance',
        authorization: `Token ${service.sandbox.apiKey}`,
        accept: 'application/json',
        userAgent: 'payments-slack-bot/test',
        at: expect.any(Number),
      },
    ]);
  });

  it('accepts a base URL with a trailing slash', async () => {
    await service.client({ baseUrl: `${service.sandbox.url}/` }).getBalance();
    expect(service.sandbox.requests[0]?.path).toBe('/api/v2/balance');
  });

  it('keeps integers above 2^53 and unknown currencies, and ignores extra fields', async () => {
    const own = await startSandbox({
      balances: [
        { id: 'NEWCOIN-X9', title: 'Brand new coin', balance: num('9007199254740993'), ...{ frozen: true } },
      ],
    });
    const ownPool = new Pool(own.url);
    try {
      const balance = await createPaymentsClient({
        baseUrl: own.url,
        apiKey: own.apiKey,
        dispatcher: ownPool,
        userAgent: 't',
        timeoutMs: 2000,
      }).getBalance();
      expect(balance.map((b) => [b.id, b.balance.toString()])).toEqual([['NEWCOIN-X9', '9007199254740993']]);
    } finally {
      await ownPool.close();
      await own.close();
    }
  });

  it('maps 401 UnauthorizedError to InvalidApiKeyError, without retrying', async () => {
    const error = await failure(service.client({ apiKey: 'wrong-key-123456' }).getBalance());
    expect(error).toBeInstanceOf(InvalidApiKeyError);
    expect(error).toMatchObject({ code: 'invalid_api_key', status: 401, name: 'InvalidApiKeyError' });
    expect(service.sandbox.requests).toHaveLength(1);
  });
});

describe('getInvoice', () => {
  it('returns every documented field, dates as instants and amounts exact', async () => {
    const invoice = await service.client().getInvoice(DEMO_INVOICE_IDS.open);
    const wire = demoInvoices(service.sandbox.payUrl).find((i) => i.id === DEMO_INVOICE_IDS.open);
    expect(invoice).toMatchObject({
      id: DEMO_INVOICE_IDS.open,
      payStatus: 'none',
      status: 'open',
      currency: 'USDT',
      feeByClient: true,
      sendToEmail: true,
      title: 'Order #1042 — annual support plan',
      link: `${service.sandbox.payUrl}/pay/${DEMO_INVOICE_IDS.open}`,
      methods: ['USDT-TRC20', 'USDT-ERC20', 'BTC', 'ETH', 'LTC'],
      shop: {
        title: 'Acme Hardware Store',
        successUrl: 'https://shop.example.com/checkout/success',
        failUrl: 'https://shop.example.com/checkout/failed',
      },
    });
    expect(invoice.amount.toString()).toBe('149.99');
    expect(invoice.fee.toString()).toBe('1.4999');
    expect(invoice.createdAt).toBeInstanceOf(Date);
    expect(Math.abs(invoice.createdAt.getTime() - Date.parse(wire?.createdAt ?? ''))).toBeLessThan(1000);
    expect(invoice.timeout.getTime()).toBeGreaterThan(invoice.createdAt.getTime());
  });

  it('gives null for shop URLs that are not set', async () => {
    const invoice = await service.client().getInvoice(DEMO_INVOICE_IDS.expired);
    expect(invoice.shop).toEqual({ title: 'Acme Gift Cards', successUrl: null, failUrl: null });
  });

  it('takes unknown status values and currencies as they come', async () => {
    const odd = {
      ...demoInvoices('https://pay.example.com')[0],
      status: 'under_review',
      payStatus: 'partially_paid',
      currency: 'XYZ',
      methods: ['NEWCHAIN-USDC'],
      riskScore: 0.3,
    };
    service.sandbox.failNext({ kind: 'status', status: 200, body: stringify(odd) });
    const invoice = await service.client().getInvoice(DEMO_INVOICE_IDS.open);
    expect(invoice).toMatchObject({ status: 'under_review', payStatus: 'partially_paid', currency: 'XYZ' });
    expect(invoice).not.toHaveProperty('riskScore');
  });

  it('maps 400 BadRequestError to InvoiceNotFoundError carrying the id, without retrying', async () => {
    const id = invoiceId('aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee');
    const error = await failure(service.client().getInvoice(id));
    expect(error).toBeInstanceOf(InvoiceNotFoundError);
    expect(error).toMatchObject({ code: 'invoice_not_found', invoiceId: id, status: 400 });
    expect(error.cause).toBeInstanceOf(ServiceError);
    expect(service.sandbox.requests).toHaveLength(1);
  });

  it.each([
    ['another 400', 400, '{"status":400,"name":"ValidationError","message":"bad"}'],
    ['a 404', 404, '{"status":404,"name":"BadRequestError","message":"no any invoice"}'],
  ])('keeps %s a service error: only a 400 BadRequestError means not found', async (_label, status, body) => {
    service.sandbox.failNext({ kind: 'status', status, body });
    const error = await failure(service.client().getInvoice(DEMO_INVOICE_IDS.open));
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ code: 'service_error', status });
  });

  it('maps a 400 BadRequestError on the balance to a service error, not "invoice not found"', async () => {
    service.sandbox.failNext({
      kind: 'status',
      status: 400,
      body: '{"status":400,"name":"BadRequestError","message":"x"}',
    });
    const error = await failure(service.client().getBalance());
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ serviceName: 'BadRequestError', serviceMessage: 'x' });
  });

  it.each(['', '../balance', '../../api/v2/balance', `${DEMO_INVOICE_IDS.open}/../../balance`, 'ABC'])(
    'refuses %j cast to an InvoiceId, making no request',
    async (input) => {
      const error = await failure(service.client().getInvoice(input as never));
      expect(error).toBeInstanceOf(TypeError);
      expect(service.sandbox.requests).toHaveLength(0);
    },
  );
});

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

describe('the API key never leaks', () => {
  const key = 'sk-live-Zq8Xv2LmN4pR7tY1';
  const echo = (status: number) =>
    JSON.stringify({ status, name: `Err ${key}`, message: `bad key ${key}`, details: { key } });

  it.each<[string, () => void]>([
    ['401', () => service.sandbox.failNext({ kind: 'status', status: 401, body: echo(401) })],
    ['403 echoing the key', () => service.sandbox.failNext({ kind: 'status', status: 403, body: echo(403) })],
    ['503', () => service.sandbox.failNext({ kind: 'status', status: 503, body: echo(503) }, 3)],
    ['429', () => service.sandbox.failNext({ kind: 'status', status: 429, body: echo(429) }, 3)],
    [
      'a broken body echoing the key',
      () => service.sandbox.failNext({ kind: 'status', status: 200, body: `<${key}>` }),
    ],
    [
      'a schema failure echoing the key',
      () => service.sandbox.failNext({ kind: 'status', status: 200, body: `{"result":"${key}"}` }),
    ],
    ['a reset', () => service.sandbox.failNext({ kind: 'reset' }, 3)],
    ['a timeout', () => service.sandbox.failNext({ kind: 'hang' })],
  ])('not in the error, its fields or its cause chain after %s', async (_label, arrange) => {
    arrange();
    const error = await failure(service.client({ apiKey: key, timeoutMs: 300 }).getBalance());
    const everything = [
      error.message,
      String(error),
      inspect(error, { depth: Number.POSITIVE_INFINITY, showHidden: true }),
      JSON.stringify(error),
    ].join('\n');
    expect(everything).not.toContain(key);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-21T12:00:00Z');
  it.each([
    ['120', 120_000],
    [' 0 ', 0],
    ['Sat, 21 Nov 2026 12:00:30 GMT', 30_000],
    ['Sat, 21 Nov 2026 11:00:00 GMT', 0], // a date in the past means "now"
    ['99999999999999999999', 6 * 3_600_000], // absurd waits are capped at six hours
    ['Fri, 31 Dec 9999 23:59:59 GMT', 6 * 3_600_000],
    ['21600', 6 * 3_600_000],
    ['21599', 21_599_000],
    ['soon', undefined],
    ['-5', undefined],
    [undefined, undefined],
  ])('reads %j as %s ms', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });
});

describe('the retry policy, with its clock, dice and sleep replaced', () => {
  /** A world where time moves only when the client sleeps, and the dice always roll `roll`. */
  function world(roll = 0.5) {
    let now = 0;
    const sleeps: number[] = [];
    return {
      sleeps,
      environment: {
        random: () => roll,
        now: () => now,
        sleep: async (ms: number) => {
          sleeps.push(ms);
          now += ms;
        },
      },
    };
  }

  it('backs off by random × base × 2^n between attempts', async () => {
    service.sandbox.failNext({ kind: 'status', status: 503 }, 4);
    const w = world(0.5);
    await failure(
      service
        .client({
          retry: { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 10_000 },
          retryEnvironment: w.environment,
        })
        .getBalance(),
    );
    expect(w.sleeps).toEqual([50, 100, 200]);
    expect(service.sandbox.requests).toHaveLength(4);
  });

  it('caps each backoff at maxDelayMs', async () => {
    service.sandbox.failNext({ kind: 'status', status: 503 }, 3);
    const w = world(0.999);
    await failure(
      service
        .client({
          retry: { maxRetries: 2, baseDelayMs: 1000, maxDelayMs: 1500 },
          retryEnvironment: w.environment,
          timeoutMs: 60_000,
        })
        .getBalance(),
    );
    expect(w.sleeps).toEqual([999, 1498.5]);
  });

  it('waits exactly what Retry-After asks when it fits the deadline', async () => {
    service.sandbox.failNext({ kind: 'status', status: 429, headers: { 'retry-after': '3' } });
    const w = world();
    await service.client({ retryEnvironment: w.environment, timeoutMs: 10_000 }).getBalance();
    expect(w.sleeps).toEqual([3000]);
  });

  it('retries a 429 without Retry-After with the ordinary backoff', async () => {
    service.sandbox.failNext({ kind: 'status', status: 429 });
    const w = world(0.25);
    await expect(
      service
        .client({
          retry: { maxRetries: 2, baseDelayMs: 40, maxDelayMs: 1000 },
          retryEnvironment: w.environment,
        })
        .getBalance(),
    ).resolves.toHaveLength(7);
    expect(w.sleeps).toEqual([10]);
    expect(service.sandbox.requests).toHaveLength(2);
  });

  it('makes one request and no sleep with maxRetries 0', async () => {
    service.sandbox.failNext({ kind: 'status', status: 503 });
    const w = world();
    const error = await failure(
      service
        .client({
          retry: { maxRetries: 0, baseDelayMs: 10, maxDelayMs: 10 },
          retryEnvironment: w.environment,
        })
        .getBalance(),
    );
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(w.sleeps).toEqual([]);
    expect(service.sandbox.requests).toHaveLength(1);
  });

  it('ends the call with the last error when the next backoff would not fit the time left', async () => {
    service.sandbox.failNext({ kind: 'status', status: 503 }, 3);
    const w = world(0.5);
    // Backoffs of 300 and 600 fit the 1000 ms deadline; the third (1200) does not fit the 100 left.
    const error = await failure(
      service
        .client({
          retry: { maxRetries: 5, baseDelayMs: 600, maxDelayMs: 10_000 },
          retryEnvironment: w.environment,
          timeoutMs: 1000,
        })
        .getBalance(),
    );
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(w.sleeps).toEqual([300, 600]);
    expect(service.sandbox.requests).toHaveLength(3);
  });

  it('reports a timeout when the deadline passes during a backoff', async () => {
    service.sandbox.failNext({ kind: 'status', status: 503 });
    const error = await failure(
      service
        .client({
          timeoutMs: 100,
          retryEnvironment: {
            now: () => 0,
            random: () => 0.5,
            // A sleep that only the deadline ends.
            sleep: (_ms, signal) =>
              new Promise((_resolve, reject) => signal.addEventListener('abort', reject)),
          },
        })
        .getBalance(),
    );
    expect(error).toBeInstanceOf(PaymentTimeoutError);
    expect(error).toMatchObject({ timeoutMs: 100 });
    expect(service.sandbox.requests).toHaveLength(1);
  });

  it('logs each retry as a warning with the attempt, code, status and delay', async () => {
    service.sandbox.failNext({ kind: 'status', status: 502 });
    const warnings: [object, string][] = [];
    const w = world(0.5);
    await service
      .client({
        retry: { maxRetries: 1, baseDelayMs: 100, maxDelayMs: 100 },
        retryEnvironment: w.environment,
        logger: { warn: (fields, message) => warnings.push([fields, message]) },
      })
      .getBalance();
    expect(warnings).toEqual([
      [
        { operation: 'balance', attempt: 1, code: 'service_unavailable', status: 502, delayMs: 50 },
        'payment service call failed, retrying',
      ],
    ]);
  });
});

describe('error classes', () => {
  it.each<[PaymentError, string, string]>([
    [new InvalidApiKeyError({ status: 401 }), 'InvalidApiKeyError', 'invalid_api_key'],
    [new InvoiceNotFoundError('x', { status: 400 }), 'InvoiceNotFoundError', 'invoice_not_found'],
    [new RateLimitedError(1000, { status: 429 }), 'RateLimitedError', 'rate_limited'],
    [
      new ServiceUnavailableError('HTTP 503', { status: 503 }),
      'ServiceUnavailableError',
      'service_unavailable',
    ],
    [new PaymentTimeoutError(8000, {}), 'PaymentTimeoutError', 'timeout'],
    [new UnexpectedResponseError({ detail: 'x' }), 'UnexpectedResponseError', 'unexpected_response'],
    [new ServiceError('E', 'm', { status: 418 }), 'ServiceError', 'service_error'],
    [new BusyError(3), 'BusyError', 'busy'],
  ])('%s is named %s with code %s', (error, name, code) => {
    expect(error.name).toBe(name);
    expect(error.code).toBe(code);
    expect(String(error)).toMatch(new RegExp(`^${name}: `));
  });

  it.each<[PaymentError, string]>([
    [new InvalidApiKeyError({}), 'the payment service rejected the API key'],
    [new InvoiceNotFoundError('abc', {}), 'no invoice abc'],
    [new RateLimitedError(undefined, {}), 'rate limited by the payment service'],
    [new RateLimitedError(1500, {}), 'rate limited by the payment service, retry after 1500 ms'],
    [new ServiceUnavailableError('ECONNRESET', {}), 'payment service unavailable: ECONNRESET'],
    [new PaymentTimeoutError(300, {}), 'the payment service did not answer within 300 ms'],
    [
      new UnexpectedResponseError({ detail: 'the body is not JSON' }),
      'unexpected answer from the payment service: the body is not JSON',
    ],
    [new ServiceError(undefined, undefined, { status: 404 }), 'payment service answered HTTP 404'],
    [
      new ServiceError('Forbidden', 'disabled', { status: 403 }),
      'payment service answered HTTP 403 Forbidden: disabled',
    ],
  ])('words its log message: %s', (error, message) => {
    expect(error.message).toBe(message);
  });

  it('keeps the cause only when there is one', () => {
    expect('cause' in new InvalidApiKeyError({ status: 401 })).toBe(false);
    const cause = new Error('inner');
    expect(new ServiceUnavailableError('x', { cause }).cause).toBe(cause);
  });

  it('gives an unexpected answer empty issues and snippet unless told', () => {
    const error = new UnexpectedResponseError({ detail: 'x', status: 200 });
    expect(error).toMatchObject({ issues: [], bodySnippet: '', status: 200 });
  });
});

describe('answers that are not what they seem', () => {
  it.each([
    [
      'an error status with a result',
      '{"status":"error","message":"maintenance","result":[{"id":"BTC","title":"B","balance":1}]}',
      'the status is "error", not "success": maintenance',
    ],
    [
      'an error status with an empty result',
      '{"status":"error","result":[]}',
      'the status is "error", not "success"',
    ],
    ['no status at all', '{"result":[]}', 'the status is null, not "success"'],
  ])('never shows %s as the balance', async (_label, body, detail) => {
    service.sandbox.failNext({ kind: 'status', status: 200, body });
    const error = await failure(service.client().getBalance());
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error.message).toBe(`unexpected answer from the payment service: ${detail}`);
    expect(service.sandbox.requests).toHaveLength(1);
  });

  it('cuts a long service message in that error on a character boundary', async () => {
    service.sandbox.failNext({
      kind: 'status',
      status: 200,
      body: JSON.stringify({ status: 'error', message: `${'a'.repeat(199)}😀😀`, result: [] }),
    });
    const error = await failure(service.client().getBalance());
    expect(error.message).toMatch(/: a{199}$/);
  });
});

describe('the API key in answers', () => {
  const key = 'sk-live-"quoted"\\back-Zq8Xv2LmN4pR7tY1';

  it('is redacted before the snippet is cut, so no part of it is kept', async () => {
    const body = `${'x'.repeat(180)} Token ${key}`;
    service.sandbox.failNext({ kind: 'status', status: 200, body });
    const error = (await failure(service.client({ apiKey: key }).getBalance())) as UnexpectedResponseError;
    expect(error.bodySnippet).toBe(`${'x'.repeat(180)} Token [REDACTED]`.slice(0, 200));
    expect(error.bodySnippet).not.toContain('sk-live');
  });

  it('is redacted in its JSON-escaped spelling too', async () => {
    const body = JSON.stringify({ result: `echo ${key}` });
    expect(body).not.toContain(key); // the body holds the escaped spelling only
    service.sandbox.failNext({ kind: 'status', status: 200, body });
    const error = (await failure(service.client({ apiKey: key }).getBalance())) as UnexpectedResponseError;
    expect(error.bodySnippet).toBe('{"result":"echo [REDACTED]"}');
  });

  it('is removed from every string of a successful answer before anything shows it', async () => {
    const wire = {
      ...demoInvoices(service.sandbox.payUrl)[0],
      title: `Order for ${key}`,
      shop: { title: key, failUrl: null, successUrl: null },
    };
    service.sandbox.failNext({ kind: 'status', status: 200, body: stringify(wire) ?? '' });
    const invoice = await service.client({ apiKey: key }).getInvoice(DEMO_INVOICE_IDS.open);
    expect(invoice.title).toBe('Order for [REDACTED]');
    expect(invoice.shop.title).toBe('[REDACTED]');
    expect(invoice.amount.toString()).toBe('149.99');
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

describe('the default retry policy', () => {
  it('retries a 503 twice, with backoff of at most 200 ms then 400 ms', async () => {
    service.sandbox.failNext({ kind: 'status', status: 503 }, 2);
    const c = createPaymentsClient({
      baseUrl: service.sandbox.url,
      apiKey: service.sandbox.apiKey,
      dispatcher: service.pool,
      userAgent: 'payments-slack-bot/test',
      timeoutMs: 5000,
    });
    const started = performance.now();
    await c.getBalance();
    expect(service.sandbox.requests).toHaveLength(3);
    expect(performance.now() - started).toBeLessThan(1500);
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
