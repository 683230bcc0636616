import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS, num } from '../../src/sandbox/data.js';
import { coinOf, credited } from '../../src/sandbox/payment.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';

/**
 * A customer paying a sandbox invoice, as the real service would record it: the invoice paid and
 * closed, and its amount in the balance of the coin it was paid in, digit for digit.
 */

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await startSandbox();
});
afterEach(() => sandbox.close());

/** The balance as the bot reads it: the service's own answer, its digits as sent. */
async function balanceOf(coin: string): Promise<string | undefined> {
  const response = await fetch(`${sandbox.url}/api/v2/balance`, {
    headers: { authorization: `Token ${sandbox.apiKey}` },
  });
  const raw = await response.text();
  return new RegExp(`"id":"${coin}","title":"[^"]*","balance":([0-9.]+)`).exec(raw)?.[1];
}

describe('paying a sandbox invoice', () => {
  it('adds exactly its amount to the balance of the coin it was paid in, and nothing else', async () => {
    const before = sandbox.balances.map((b) => [b.id, b.balance.toString()]);
    expect(await balanceOf('USDT-TRC20')).toBe('1520.5');

    expect(sandbox.payInvoice(DEMO_INVOICE_IDS.open)).toEqual({ coin: 'USDT-TRC20', amount: '149.99' });

    // 1520.5 + 149.99, exact: a float would say 1670.4899999999998.
    expect(await balanceOf('USDT-TRC20')).toBe('1670.49');
    const after = sandbox.balances.map((b) => [b.id, b.balance.toString()]);
    expect(after.filter(([id]) => id !== 'USDT-TRC20')).toEqual(before.filter(([id]) => id !== 'USDT-TRC20'));
    expect(sandbox.current.find((i) => i.id === DEMO_INVOICE_IDS.open)).toMatchObject({
      payStatus: 'paid',
      status: 'closed',
    });
  });

  it('is paid once: a paid, expired or fiat-priced invoice cannot be paid, and the balance stays', async () => {
    sandbox.payInvoice(DEMO_INVOICE_IDS.open);
    expect(() => sandbox.payInvoice(DEMO_INVOICE_IDS.open)).toThrow(
      /cannot be paid here: it is closed, payment paid/,
    );
    expect(() => sandbox.payInvoice(DEMO_INVOICE_IDS.expired)).toThrow(/priced in USD/);
    expect(() => sandbox.payInvoice('nope')).toThrow(/no invoice nope/);
    expect(await balanceOf('USDT-TRC20')).toBe('1670.49');
  });

  it('is a demo control too: POST /sandbox/invoices/<id>/pay, answering what arrived, or 409 and why', async () => {
    const pay = (id: string) => fetch(`${sandbox.url}/sandbox/invoices/${id}/pay`, { method: 'POST' });
    const paid = await pay(DEMO_INVOICE_IDS.open);
    expect(paid.status).toBe(200);
    expect(await paid.json()).toEqual({ coin: 'USDT-TRC20', amount: '149.99' });
    expect(await balanceOf('USDT-TRC20')).toBe('1670.49');
    const again = await pay(DEMO_INVOICE_IDS.open);
    expect(again.status).toBe(409);
    expect(((await again.json()) as { message: string }).message).toMatch(/cannot be paid here/);
    sandbox.reset();
    expect(await balanceOf('USDT-TRC20')).toBe('1520.5');
  });
});

describe('the coin and the sum', () => {
  const open = { status: 'open', payStatus: 'none' };

  it('pays in the first accepted method that is the invoice’s own currency', () => {
    expect(coinOf({ ...open, currency: 'USDT', methods: ['BTC', 'USDT-ERC20', 'USDT-TRC20'] })).toBe(
      'USDT-ERC20',
    );
    expect(coinOf({ ...open, currency: 'BTC', methods: ['USDT-TRC20', 'BTC'] })).toBe('BTC');
    expect(coinOf({ ...open, currency: 'BTC', methods: ['BTCX'] })).toBeUndefined();
    expect(coinOf({ ...open, currency: 'USD', methods: ['BTC'] })).toBeUndefined();
    expect(coinOf({ ...open, status: 'expired', currency: 'BTC', methods: ['BTC'] })).toBeUndefined();
  });

  it('sums digit for digit, past what a float holds, and opens an entry for a coin not yet held', () => {
    const balances = [{ id: 'BTC', title: 'Bitcoin', balance: num('0.0000001') }];
    expect(credited(balances, { coin: 'BTC', amount: '0.0000002' })[0]?.balance.toString()).toBe('0.0000003');
    expect(
      credited([{ id: 'X', title: 'X', balance: num('9007199254740993.1') }], {
        coin: 'X',
        amount: '0.9',
      })[0]?.balance.toString(),
    ).toBe('9007199254740994');
    expect(
      credited(balances, { coin: 'LTC', amount: '1.50' }).map((b) => [b.id, b.balance.toString()]),
    ).toEqual([
      ['BTC', '0.0000001'],
      ['LTC', '1.5'],
    ]);
  });
});
