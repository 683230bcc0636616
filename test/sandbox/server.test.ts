import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());

const get = async (path: string, key?: string) => {
  const response = await fetch(
    `${sandbox.url}${path}`,
    key ? { headers: { authorization: `Token ${key}` } } : {},
  );
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

describe('the sandbox service', () => {
  it.each(['/api/v2/balance', `/api/v2/invoice/${DEMO_INVOICE_IDS.open}`])(
    'answers %s with the documented 401 without the right key',
    async (path) => {
      for (const key of [undefined, 'wrong-key-0000']) {
        expect(await get(path, key)).toEqual({
          status: 401,
          body: {
            status: 401,
            name: 'UnauthorizedError',
            message: 'shop not found',
            details: 'check api key',
          },
        });
      }
    },
  );

  it('answers both calls with the right key', async () => {
    expect((await get('/api/v2/balance', sandbox.apiKey)).body.status).toBe('success');
    expect((await get(`/api/v2/invoice/${DEMO_INVOICE_IDS.open}`, sandbox.apiKey)).body.id).toBe(
      DEMO_INVOICE_IDS.open,
    );
  });

  it('answers an unknown invoice with the documented 400', async () => {
    expect(await get('/api/v2/invoice/aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee', sandbox.apiKey)).toEqual({
      status: 400,
      body: { status: 400, name: 'BadRequestError', message: 'no any invoice', details: {} },
    });
  });

  it('changes one merchant’s invoice for that key alone, and records when each call came', async () => {
    const [open] = sandbox.current;
    if (!open) throw new Error('no demo invoice');
    sandbox.addMerchant('merchant-a-0000', { balances: [], invoices: [open] });
    sandbox.addMerchant('merchant-b-0000', { balances: [], invoices: [open] });
    sandbox.updateMerchantInvoice('merchant-a-0000', open.id.toUpperCase(), { payStatus: 'paid' });
    const before = Date.now();
    expect((await get(`/api/v2/invoice/${open.id}`, 'merchant-a-0000')).body.payStatus).toBe('paid');
    expect((await get(`/api/v2/invoice/${open.id}`, 'merchant-b-0000')).body.payStatus).toBe(open.payStatus);
    expect((await get(`/api/v2/invoice/${open.id}`, sandbox.apiKey)).body.payStatus).toBe(open.payStatus);
    const last = sandbox.requests.at(-1);
    expect(last?.authorization).toBe(`Token ${sandbox.apiKey}`);
    expect(last?.at).toBeGreaterThanOrEqual(before);
    expect(() => sandbox.updateMerchantInvoice('merchant-c-0000', open.id, { status: 'closed' })).toThrow(
      /no invoice/,
    );
  });
});
