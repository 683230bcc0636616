import { feedQueries, type NewSubscription } from '../../src/feed/queries.js';
import {
  Amount,
  type BalanceEntry,
  type Invoice,
  type InvoiceId,
  parseInvoiceId,
} from '../../src/payments/index.js';
import type { Store } from '../../src/store/database.js';
import { ONE_WORKSPACE } from '../../src/store/keys.js';

export const NOW = new Date('2026-11-21T12:00:00.000Z');
export const INVOICE_ID = '5b8e1f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b';

export function amount(text: string): Amount {
  const parsed = Amount.parse(text);
  if (!parsed) throw new Error(`bad test amount ${text}`);
  return parsed;
}

export function balanceEntry(id: string, balance: string, title = id): BalanceEntry {
  return { id, title, balance: amount(balance) };
}

export function invoice(overrides: Partial<Invoice> = {}): Invoice {
  return {
    id: invoiceId(INVOICE_ID),
    payStatus: 'none',
    createdAt: new Date(NOW.getTime() - 2 * 3_600_000),
    amount: amount('149.99'),
    currency: 'USDT',
    feeByClient: true,
    sendToEmail: true,
    timeout: new Date(NOW.getTime() + 22 * 3_600_000),
    status: 'open',
    title: 'Order #1042',
    link: `https://pay.example.com/pay/${INVOICE_ID}`,
    methods: ['USDT-TRC20', 'BTC'],
    fee: amount('1.4999'),
    shop: { title: 'Acme Store', successUrl: 'https://shop.example.com/ok', failUrl: null },
    ...overrides,
  };
}

/** An invoice id for a test, checked like the bot checks one. */
export function invoiceId(text: string): InvoiceId {
  const id = parseInvoiceId(text);
  if (!id) throw new Error(`bad test invoice id ${text}`);
  return id;
}

type StoredSubscription = NewSubscription;

/**
 * A payments feed as the store keeps it: active, its digest at 09:00 UTC due when it began, not
 * leased, no key notice; `fields` name it and say anything else.
 */
export const subscriptionRow = (
  fields: Pick<StoredSubscription, 'id' | 'team_id' | 'channel_id' | 'subscriber_id' | 'created_at'> &
    Partial<StoredSubscription>,
): StoredSubscription => ({
  digest_hour: 9,
  digest_minute: 0,
  digest_zone: 'UTC',
  state: 'active',
  ended_at: null,
  end_reason: null,
  next_digest_at: fields.created_at,
  lease_owner: null,
  lease_until: null,
  key_notice_at: null,
  ...fields,
});

/**
 * The one workspace's balance poll last read the balance at `at`: a kept reading is in force
 * only up to a successful poll (src/feed/service.ts `readingsAt`).
 */
export async function polledAt(store: Store, at: number): Promise<void> {
  await store.db.deleteFrom('singletons').where('name', '=', 'balance_poll').execute();
  await store.transaction((trx) => feedQueries(store, ONE_WORKSPACE).startPoll(trx, at, at));
}
