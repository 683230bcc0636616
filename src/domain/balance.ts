import type { Amount } from '../payments/index.js';

/** A balance as stored: each currency's title and exact digits, by currency id. */
export type StoredBalance = Record<string, { title: string; balance: string }>;

/** One currency whose balance moved between two readings. */
export interface BalanceChange {
  currency: string;
  title: string;
  /** `after - before`, exact: positive for money received, negative for money that left. */
  delta: Amount;
  before: Amount;
  after: Amount;
}
