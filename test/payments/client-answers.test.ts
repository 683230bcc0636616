import { stringify } from 'lossless-json';
import { Pool } from 'undici';
import { describe, expect, it } from 'vitest';
import {
  BusyError,
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
import { DEMO_INVOICE_IDS, demoInvoices, num } from '../../src/sandbox/data.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { invoiceId } from '../support/factories.js';
import { failure, useFastRetryService } from './client-setup.js';

/** The payments client reading answers: the balance, an invoice, answers that are not what they seem, and its error classes. */

const service = useFastRetryService();

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
