import Big from 'big.js';
import { num, type WireBalanceEntry, type WireInvoice } from './data.js';

/**
 * A customer paying an invoice, as the sandbox plays it: the invoice becomes paid and closed, and
 * its amount arrives in the merchant's balance, in the coin it was paid in, digit for digit, as the
 * real service's balance would grow. So the payments feed, which reads the balance, sees the
 * payment too.
 */

/** What paying an invoice credits: `amount` (exact decimal text) of `coin`. */
export interface Payment {
  coin: string;
  amount: string;
}

/**
 * The coin a customer pays the invoice in: the first accepted method that is the invoice's own
 * currency (a `USDT` invoice is paid as `USDT-TRC20`, a `BTC` one as `BTC`), so its amount is
 * credited as it stands, with no exchange rate. `undefined` when the invoice cannot be paid here:
 * already paid, no longer open, or priced in a currency no accepted method is (25 `USD` paid in
 * `BTC` would need a rate the sandbox does not have).
 */
export function coinOf(invoice: Pick<WireInvoice, 'status' | 'payStatus' | 'currency' | 'methods'>) {
  if (invoice.status !== 'open' || invoice.payStatus === 'paid') return undefined;
  return invoice.methods.find((m) => m === invoice.currency || m.startsWith(`${invoice.currency}-`));
}

/** The balance once `payment` has arrived: its coin's entry grows by exactly that amount (a new entry when it held none). */
export function credited(balances: readonly WireBalanceEntry[], payment: Payment): WireBalanceEntry[] {
  const plus = (balance: string) => num(new Big(balance).plus(payment.amount).toFixed());
  if (!balances.some((b) => b.id === payment.coin))
    return [...balances, { id: payment.coin, title: payment.coin, balance: plus('0') }];
  return balances.map((b) => (b.id === payment.coin ? { ...b, balance: plus(b.balance.toString()) } : b));
}

/** How the invoice reads once paid. */
export const PAID: Readonly<Pick<WireInvoice, 'payStatus' | 'status'>> = {
  payStatus: 'paid',
  status: 'closed',
};
