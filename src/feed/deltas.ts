import type { BalanceChange, StoredBalance } from '../domain/balance.js';
import { Amount, type BalanceEntry } from '../payments/index.js';

export function toStored(entries: readonly BalanceEntry[]): StoredBalance {
  const stored: StoredBalance = {};
  for (const e of entries) stored[e.id] = { title: e.title, balance: e.balance.toString() };
  return stored;
}

const amount = (digits: string): Amount => Amount.parse(digits) ?? Amount.ZERO;

/**
 * What moved between two readings, in the order of the new reading, then vanished currencies: a
 * new currency rises from 0, a vanished one falls to 0. Equal values written differently
 * (`1.50` and `1.5`) are not a change.
 */
export function balanceChanges(before: StoredBalance, after: StoredBalance): BalanceChange[] {
  const changes: BalanceChange[] = [];
  const ids = [...Object.keys(after), ...Object.keys(before).filter((id) => !(id in after))];
  for (const id of ids) {
    const was = before[id];
    const is = after[id];
    const from = was ? amount(was.balance) : Amount.ZERO;
    const to = is ? amount(is.balance) : Amount.ZERO;
    if (from.equals(to)) continue;
    changes.push({
      currency: id,
      title: is?.title ?? was?.title ?? id,
      delta: to.minus(from),
      before: from,
      after: to,
    });
  }
  return changes;
}
