import type { Change, WatchedField } from '../domain/watch.js';
import { Amount, type Invoice } from '../payments/index.js';

/** An invoice as stored: amounts as their exact digits, instants as ISO 8601. */
export interface InvoiceSnapshot extends Omit<Invoice, 'amount' | 'fee' | 'createdAt' | 'timeout'> {
  amount: string;
  fee: string;
  createdAt: string;
  timeout: string;
}

export function toSnapshot(invoice: Invoice): InvoiceSnapshot {
  return {
    ...invoice,
    amount: invoice.amount.toString(),
    fee: invoice.fee.toString(),
    createdAt: invoice.createdAt.toISOString(),
    timeout: invoice.timeout.toISOString(),
  };
}

const amount = (digits: string): Amount => {
  const parsed = Amount.parse(digits);
  if (!parsed) throw new Error(`a stored amount is not a decimal: ${digits}`);
  return parsed;
};

export function fromSnapshot(snapshot: InvoiceSnapshot): Invoice {
  return {
    ...snapshot,
    amount: amount(snapshot.amount),
    fee: amount(snapshot.fee),
    createdAt: new Date(snapshot.createdAt),
    timeout: new Date(snapshot.timeout),
  };
}

const WATCHED: readonly WatchedField[] = ['status', 'payStatus', 'amount', 'timeout', 'methods'];

const fieldText = (snapshot: InvoiceSnapshot, field: WatchedField): string => {
  const value = snapshot[field];
  return Array.isArray(value) ? value.join(', ') : value;
};

/** What changed between two reads, in a fixed order; empty when nothing that matters did. */
export function changes(before: InvoiceSnapshot, after: InvoiceSnapshot): Change[] {
  return WATCHED.flatMap((field) => {
    const [was, is] = [fieldText(before, field), fieldText(after, field)];
    return was === is ? [] : [{ field, before: was, after: is }];
  });
}
