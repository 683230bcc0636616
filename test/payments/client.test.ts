import { inspect } from 'node:util';
import { stringify } from 'lossless-json';
import { Pool } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../src/payments/errors.js';
import {
  createPaymentsClient,
  InvalidApiKeyError,
  InvalidInvoiceIdError,
  InvoiceNotFoundError,
  type PaymentError,
  type PaymentsClient,
  PaymentTimeoutError,
  RateLimitedError,
  ServiceError,
  ServiceUnavailableError,
  UnexpectedResponseError,
} from '../../src/payments/index.js';
import { DEMO_INVOICE_IDS, demoInvoices, num } from '../../src/sandbox/data.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';

const FAST_RETRY = { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 20 };

let sandbox: Sandbox;
let pool: Pool;

beforeAll(async () => {
  sandbox = await startSandbox();
  pool = new Pool(sandbox.url);
});
afterAll(async () => {
  await pool.close();
  await sandbox.close();
});
afterEach(() => sandbox.reset());

function client(overrides: Partial<Parameters<typeof createPaymentsClient>[0]> = {}): PaymentsClient {
  return createPaymentsClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.apiKey,
    dispatcher: pool,
    userAgent: 'payments-slack-bot/test',
    retry: FAST_RETRY,
    ...overrides,
  });
}

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
    const balance = await client().getBalance();
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
    await client().getBalance();
    expect(sandbox.requests).toEqual([
      {
        method: 'GET',
        path: '/api/v2/balance',
        authorization: `Token ${sandbox.apiKey}`,
        accept: 'application/json',
        userAgent: 'payments-slack-bot/test',
      },
    ]);
  });

  it('accepts a base URL with a trailing slash', async () => {
    await client({ baseUrl: `${sandbox.url}/` }).getBalance();
    expect(sandbox.requests[0]?.path).toBe('/api/v2/balance');
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
      }).getBalance();
      expect(balance.map((b) => [b.id, b.balance.toString()])).toEqual([['NEWCOIN-X9', '9007199254740993']]);
    } finally {
      await ownPool.close();
      await own.close();
    }
  });

  it('maps 401 UnauthorizedError to InvalidApiKeyError, without retrying', async () => {
    const error = await failure(client({ apiKey: 'wrong-key-123456' }).getBalance());
    expect(error).toBeInstanceOf(InvalidApiKeyError);
    expect(error).toMatchObject({ code: 'invalid_api_key', status: 401, name: 'InvalidApiKeyError' });
    expect(sandbox.requests).toHaveLength(1);
  });
});

describe('getInvoice', () => {
  it('returns every documented field, dates as instants and amounts exact', async () => {
    const invoice = await client().getInvoice(DEMO_INVOICE_IDS.open);
    const wire = demoInvoices(sandbox.payUrl).find((i) => i.id === DEMO_INVOICE_IDS.open);
    expect(invoice).toMatchObject({
      id: DEMO_INVOICE_IDS.open,
      payStatus: 'none',
      status: 'open',
      currency: 'USDT',
      feeByClient: true,
      sendToEmail: true,
      title: 'Order #1042 — annual support plan',
      link: `${sandbox.payUrl}/pay/${DEMO_INVOICE_IDS.open}`,
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
    const invoice = await client().getInvoice(DEMO_INVOICE_IDS.expired);
    expect(invoice.shop).toEqual({ title: 'Acme Gift Cards', successUrl: null, failUrl: null });
  });

  it('asks for an upper-case id in lower case', async () => {
    await client().getInvoice(DEMO_INVOICE_IDS.open.toUpperCase());
    expect(sandbox.requests.map((r) => r.path)).toEqual([`/api/v2/invoice/${DEMO_INVOICE_IDS.open}`]);
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
    sandbox.failNext({ kind: 'status', status: 200, body: stringify(odd) });
    const invoice = await client().getInvoice(DEMO_INVOICE_IDS.open);
    expect(invoice).toMatchObject({ status: 'under_review', payStatus: 'partially_paid', currency: 'XYZ' });
    expect(invoice).not.toHaveProperty('riskScore');
  });

  it('maps 400 BadRequestError to InvoiceNotFoundError carrying the id, without retrying', async () => {
    const id = 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee';
    const error = await failure(client().getInvoice(id));
    expect(error).toBeInstanceOf(InvoiceNotFoundError);
    expect(error).toMatchObject({ code: 'invoice_not_found', invoiceId: id, status: 400 });
    expect(sandbox.requests).toHaveLength(1);
  });

  it.each([
    '',
    'abc',
    '../balance',
    '../../api/v2/balance',
    '%2e%2e%2fbalance',
    `${DEMO_INVOICE_IDS.open}/../../balance`,
    `${DEMO_INVOICE_IDS.open}#`,
    'x'.repeat(5000),
  ])('rejects %j with InvalidInvoiceIdError and makes no request', async (input) => {
    const error = await failure(client().getInvoice(input));
    expect(error).toBeInstanceOf(InvalidInvoiceIdError);
    expect(error).toMatchObject({ code: 'invalid_invoice_id', input: input.slice(0, 500) });
    expect(sandbox.requests).toHaveLength(0);
  });
});

describe('failures and retries', () => {
  it.each([502, 503, 504])('retries %i twice, then reports the service unavailable', async (status) => {
    sandbox.failNext({ kind: 'status', status }, 3);
    const error = await failure(client().getBalance());
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(error).toMatchObject({ code: 'service_unavailable', status });
    expect(sandbox.requests).toHaveLength(3);
  });

  it('succeeds when a retry does', async () => {
    sandbox.failNext({ kind: 'status', status: 503 });
    await expect(client().getBalance()).resolves.toHaveLength(7);
    expect(sandbox.requests).toHaveLength(2);
  });

  it('does not retry a 500', async () => {
    sandbox.failNext({ kind: 'status', status: 500 });
    expect(await failure(client().getBalance())).toBeInstanceOf(ServiceUnavailableError);
    expect(sandbox.requests).toHaveLength(1);
  });

  it('retries a reset connection, and reports it as unavailable with the cause kept', async () => {
    sandbox.failNext({ kind: 'reset' }, 3);
    const error = await failure(client().getBalance());
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(error.cause).toBeInstanceOf(Error);
    expect(sandbox.requests).toHaveLength(3);
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
    sandbox.failNext({ kind: 'status', status: 429, headers: { 'retry-after': '0' } }, 2);
    await expect(client().getBalance()).resolves.toHaveLength(7);
    expect(sandbox.requests).toHaveLength(3);
  });

  it('gives up on 429 at once when Retry-After is beyond the deadline, and says when to retry', async () => {
    sandbox.failNext({ kind: 'status', status: 429, headers: { 'retry-after': '60' } });
    const error = await failure(client().getBalance());
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error).toMatchObject({ code: 'rate_limited', retryAfterMs: 60_000 });
    expect(sandbox.requests).toHaveLength(1);
  });

  it('stops at the deadline when the service never answers', async () => {
    sandbox.failNext({ kind: 'hang' });
    const started = performance.now();
    const error = await failure(client({ timeoutMs: 300 }).getBalance());
    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(PaymentTimeoutError);
    expect(error).toMatchObject({ code: 'timeout', timeoutMs: 300 });
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(1500);
    expect(sandbox.requests).toHaveLength(1);
  });

  it('counts retries and their backoff inside the one deadline', async () => {
    sandbox.failNext({ kind: 'status', status: 503 });
    sandbox.failNext({ kind: 'hang' });
    const started = performance.now();
    const error = await failure(client({ timeoutMs: 400 }).getBalance());
    expect(error).toBeInstanceOf(PaymentTimeoutError);
    expect(performance.now() - started).toBeLessThan(1500);
    expect(sandbox.requests).toHaveLength(2);
  });

  it('does not sleep past the deadline: a backoff that cannot fit ends the call with the last error', async () => {
    sandbox.failNext({ kind: 'status', status: 503 }, 3);
    const slowRetry = { maxRetries: 2, baseDelayMs: 10_000, maxDelayMs: 10_000 };
    const started = performance.now();
    const error = await failure(client({ timeoutMs: 200, retry: { ...slowRetry } }).getBalance());
    // Backoff is random in [0, 10 s): either it fitted (and the next 503 came) or the call ended at once.
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('reports a 200 HTML page as an unexpected answer with a short snippet, without retrying', async () => {
    sandbox.failNext({ kind: 'html' });
    const error = await failure(client().getBalance());
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error).toMatchObject({ code: 'unexpected_response', status: 200 });
    expect((error as UnexpectedResponseError).bodySnippet).toContain('Welcome to nginx');
    expect(sandbox.requests).toHaveLength(1);
  });

  it('reports a body that breaks the schema with where it broke', async () => {
    sandbox.failNext({
      kind: 'status',
      status: 200,
      body: '{"status":"success","result":[{"id":"BTC","title":"Bitcoin","balance":"lots"}]}',
    });
    const error = (await failure(client().getBalance())) as UnexpectedResponseError;
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error.issues).toEqual(['result.0.balance: not a decimal number']);
  });

  it('keeps the snippet short whatever the body size, and refuses bodies over the limit', async () => {
    sandbox.failNext({ kind: 'status', status: 200, body: `<p>${'x'.repeat(10_000)}` });
    const short = (await failure(client().getBalance())) as UnexpectedResponseError;
    expect(short.bodySnippet.length).toBeLessThanOrEqual(200);

    sandbox.failNext({ kind: 'status', status: 200, body: `{"result":[],"pad":"${'x'.repeat(5000)}"}` });
    const large = await failure(client({ maxBodyBytes: 1000 }).getBalance());
    expect(large).toBeInstanceOf(UnexpectedResponseError);
    expect(large.message).toContain('larger than 1000 bytes');
  });

  it('maps any other status to ServiceError with the service name and message', async () => {
    sandbox.failNext({
      kind: 'status',
      status: 403,
      body: '{"status":403,"name":"ForbiddenError","message":"project is disabled","details":{}}',
    });
    const error = await failure(client().getBalance());
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({
      code: 'service_error',
      status: 403,
      serviceName: 'ForbiddenError',
      serviceMessage: 'project is disabled',
    });
    expect(sandbox.requests).toHaveLength(1);
  });

  it('maps a non-JSON error answer to ServiceError with its status', async () => {
    sandbox.failNext({ kind: 'status', status: 404, body: 'Not Found' });
    const error = await failure(client().getBalance());
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ status: 404, serviceName: undefined });
  });
});

describe('single flight', () => {
  it('shares one upstream call among concurrent identical requests', async () => {
    sandbox.setLatency(100);
    try {
      const c = client();
      const results = await Promise.all(Array.from({ length: 50 }, () => c.getBalance()));
      expect(new Set(results).size).toBe(1);
      expect(sandbox.requests).toHaveLength(1);
    } finally {
      sandbox.setLatency(0);
    }
  });

  it('shares the failure too, and calls again once it has settled (no caching)', async () => {
    const c = client();
    sandbox.failNext({ kind: 'status', status: 500 });
    const errors = await Promise.allSettled([c.getBalance(), c.getBalance()]);
    expect(errors.map((e) => e.status)).toEqual(['rejected', 'rejected']);
    await c.getBalance();
    await c.getBalance();
    expect(sandbox.requests).toHaveLength(3);
  });

  it('keeps different invoices apart, and ids that differ only in case together', async () => {
    sandbox.setLatency(50);
    try {
      const c = client();
      await Promise.all([
        c.getInvoice(DEMO_INVOICE_IDS.open),
        c.getInvoice(DEMO_INVOICE_IDS.open.toUpperCase()),
        c.getInvoice(DEMO_INVOICE_IDS.paid),
      ]);
      expect(sandbox.requests.map((r) => r.path).sort()).toEqual([
        `/api/v2/invoice/${DEMO_INVOICE_IDS.open}`,
        `/api/v2/invoice/${DEMO_INVOICE_IDS.paid}`,
      ]);
    } finally {
      sandbox.setLatency(0);
    }
  });
});

describe('the API key never leaks', () => {
  const key = 'sk-live-Zq8Xv2LmN4pR7tY1';
  const echo = (status: number) =>
    JSON.stringify({ status, name: `Err ${key}`, message: `bad key ${key}`, details: { key } });

  it.each<[string, () => void]>([
    ['401', () => sandbox.failNext({ kind: 'status', status: 401, body: echo(401) })],
    ['403 echoing the key', () => sandbox.failNext({ kind: 'status', status: 403, body: echo(403) })],
    ['503', () => sandbox.failNext({ kind: 'status', status: 503, body: echo(503) }, 3)],
    ['429', () => sandbox.failNext({ kind: 'status', status: 429, body: echo(429) }, 3)],
    [
      'a broken body echoing the key',
      () => sandbox.failNext({ kind: 'status', status: 200, body: `<${key}>` }),
    ],
    [
      'a schema failure echoing the key',
      () => sandbox.failNext({ kind: 'status', status: 200, body: `{"result":"${key}"}` }),
    ],
    ['a reset', () => sandbox.failNext({ kind: 'reset' }, 3)],
    ['a timeout', () => sandbox.failNext({ kind: 'hang' })],
  ])('not in the error, its fields or its cause chain after %s', async (_label, arrange) => {
    arrange();
    const error = await failure(client({ apiKey: key, timeoutMs: 300 }).getBalance());
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
    ['soon', undefined],
    ['-5', undefined],
    [undefined, undefined],
  ])('reads %j as %s ms', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });
});
