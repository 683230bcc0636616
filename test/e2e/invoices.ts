import { num, type WireInvoice } from '../../src/sandbox/data.js';

/** Open invoices with the given ids, far from expiry, for tests that need many. */
export const manyInvoices =
  (ids: readonly string[]) =>
  (payUrl: string): WireInvoice[] =>
    ids.map((id, i) => ({
      id,
      payStatus: 'none',
      createdAt: '2026-11-21T10:00:00.000Z',
      amount: num(`${i}.5`),
      currency: 'USDT',
      feeByClient: true,
      sendToEmail: false,
      timeout: '2099-01-01T00:00:00.000Z',
      status: 'open',
      title: `Order ${i}`,
      link: `${payUrl}/pay/${id}`,
      methods: ['BTC'],
      fee: num('0.1'),
      shop: { title: 'Shop', failUrl: null, successUrl: null },
    }));
