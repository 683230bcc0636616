import { describe, expect, it } from 'vitest';
import { changes, fromSnapshot, toSnapshot } from '../../src/watches/snapshot.js';
import { amount, invoice } from '../support/factories.js';

describe('snapshots', () => {
  it('round-trip an invoice exactly: every digit, every instant', () => {
    const original = invoice({ amount: amount('9007199254740993.0000001'), fee: amount('0.0000001') });
    const back = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(original))));
    expect(back.amount.toString()).toBe('9007199254740993.0000001');
    expect(back.fee.toString()).toBe('0.0000001');
    expect(back.createdAt).toEqual(original.createdAt);
    expect(back.timeout).toEqual(original.timeout);
    expect({ ...back, amount: 0, fee: 0 }).toEqual({ ...original, amount: 0, fee: 0 });
  });

  it('refuse a stored amount that is not a decimal', () => {
    expect(() => fromSnapshot({ ...toSnapshot(invoice()), amount: 'lots' })).toThrow(
      'a stored amount is not a decimal: lots',
    );
  });
});

describe('changes', () => {
  const before = toSnapshot(invoice());

  it('is empty when nothing announced changed (a title or a fee is not announced)', () => {
    expect(changes(before, toSnapshot(invoice({ title: 'Renamed', fee: amount('9') })))).toEqual([]);
  });

  it('lists each watched field that changed, in a fixed order', () => {
    const after = toSnapshot(
      invoice({
        methods: ['BTC'],
        timeout: new Date('2030-01-01T00:00:00Z'),
        amount: amount('150'),
        payStatus: 'paid',
        status: 'closed',
      }),
    );
    expect(changes(before, after)).toEqual([
      { field: 'status', before: 'open', after: 'closed' },
      { field: 'payStatus', before: 'none', after: 'paid' },
      { field: 'amount', before: '149.99', after: '150' },
      { field: 'timeout', before: before.timeout, after: '2030-01-01T00:00:00.000Z' },
      { field: 'methods', before: 'USDT-TRC20, BTC', after: 'BTC' },
    ]);
  });

  it('sees an amount written differently as a change (digits as sent)', () => {
    expect(changes(before, toSnapshot(invoice({ amount: amount('149.990') })))).toHaveLength(1);
  });
});
