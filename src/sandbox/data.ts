import { LosslessNumber } from 'lossless-json';
import { type InvoiceId, parseInvoiceId } from '../payments/invoice-id.js';

/**
 * Demo data in the service's wire shape. Amounts are `LosslessNumber`s so the JSON carries exactly
 * these digits, as the real service's would.
 */

export interface WireBalanceEntry {
  id: string;
  title: string;
  balance: LosslessNumber;
}

export interface WireInvoice {
  id: string;
  payStatus: string;
  createdAt: string;
  amount: LosslessNumber;
  currency: string;
  feeByClient: boolean;
  sendToEmail: boolean;
  timeout: string;
  status: string;
  title: string;
  link: string;
  methods: string[];
  fee: LosslessNumber;
  shop: { title: string; failUrl: string | null; successUrl: string | null };
}

export const num = (digits: string): LosslessNumber => new LosslessNumber(digits);

export const DEMO_API_KEY = 'sandbox-0f3c9a7e5b1d4c28a6e9f0b7d3c5a1e8';

/** Zero and seven-decimal balances included, as the document allows. */
export const DEMO_BALANCES: readonly WireBalanceEntry[] = [
  { id: 'BTC', title: 'Bitcoin', balance: num('0.0123456') },
  { id: 'USDT-TRC20', title: 'Tether (TRC-20)', balance: num('1520.5') },
  { id: 'ETH', title: 'Ethereum', balance: num('0') },
  { id: 'ETC', title: 'Ethereum Classic', balance: num('12') },
  { id: 'LTC', title: 'Litecoin', balance: num('0.0000001') },
  { id: 'TRX', title: 'TRON', balance: num('0') },
  { id: 'DOGE', title: 'Dogecoin', balance: num('4200.75') },
];

const invoiceId = (text: string): InvoiceId => {
  const id = parseInvoiceId(text);
  if (id === undefined) throw new Error(`not an invoice id: ${text}`);
  return id;
};

export const DEMO_INVOICE_IDS = {
  open: invoiceId('5b8e1f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b'),
  paid: invoiceId('9d2c7b61-0a4e-4f3b-9c8d-7e6f5a4b3c2d'),
  expired: invoiceId('c0ffee00-1234-4abc-8def-0123456789ab'),
} as const;

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** Three invoices in different states, with payment links under `payUrl`, dated around `now`. */
export function demoInvoices(payUrl: string, now = Date.now()): WireInvoice[] {
  const link = (id: string) => `${payUrl.replace(/\/+$/, '')}/pay/${id}`;
  const shop = {
    title: 'Acme Hardware Store',
    successUrl: 'https://shop.example.com/checkout/success',
    failUrl: 'https://shop.example.com/checkout/failed',
  };
  return [
    {
      id: DEMO_INVOICE_IDS.open,
      payStatus: 'none',
      createdAt: iso(now - 2 * HOUR),
      amount: num('149.99'),
      currency: 'USDT',
      feeByClient: true,
      sendToEmail: true,
      timeout: iso(now + 22 * HOUR),
      status: 'open',
      title: 'Order #1042 — annual support plan',
      link: link(DEMO_INVOICE_IDS.open),
      methods: ['USDT-TRC20', 'USDT-ERC20', 'BTC', 'ETH', 'LTC'],
      fee: num('1.4999'),
      shop,
    },
    {
      id: DEMO_INVOICE_IDS.paid,
      payStatus: 'paid',
      createdAt: iso(now - 50 * HOUR),
      amount: num('0.0042'),
      currency: 'BTC',
      feeByClient: false,
      sendToEmail: false,
      timeout: iso(now - 26 * HOUR),
      status: 'closed',
      title: 'Order #1041 — hardware wallet',
      link: link(DEMO_INVOICE_IDS.paid),
      methods: ['BTC'],
      fee: num('0.0000042'),
      shop,
    },
    {
      id: DEMO_INVOICE_IDS.expired,
      payStatus: 'none',
      createdAt: iso(now - 30 * HOUR),
      amount: num('25'),
      currency: 'USD',
      feeByClient: false,
      sendToEmail: true,
      timeout: iso(now - 6 * HOUR),
      status: 'expired',
      title: 'Order #1039 — gift card',
      link: link(DEMO_INVOICE_IDS.expired),
      methods: ['BTC', 'USDT-TRC20', 'DOGE', 'TRX', 'SOL'],
      fee: num('0.25'),
      shop: { title: 'Acme Gift Cards', successUrl: null, failUrl: null },
    },
  ];
}
