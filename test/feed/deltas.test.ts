import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StoredBalance } from '../../src/domain/balance.js';
import { balanceChanges, toStored } from '../../src/feed/deltas.js';
import { Amount } from '../../src/payments/index.js';
import { signed } from '../../src/views/figures.js';
import { balanceEntry } from '../support/factories.js';

const stored = (pairs: Record<string, string>): StoredBalance =>
  Object.fromEntries(Object.entries(pairs).map(([id, balance]) => [id, { title: `${id} coin`, balance }]));

describe('balanceChanges', () => {
  it('lists rises and falls with exact differences, in the new reading’s order', () => {
    const changes = balanceChanges(
      stored({ BTC: '0.0012', USDT: '1.5', ETH: '2' }),
      stored({ USDT: '0', BTC: '0.0054', ETH: '2.0' }),
    );
    expect(
      changes.map((c) => [c.currency, c.delta.toString(), c.before.toString(), c.after.toString()]),
    ).toEqual([
      ['USDT', '-1.5', '1.5', '0'],
      ['BTC', '0.0042', '0.0012', '0.0054'],
    ]);
  });

  it('counts a new currency as rising from 0 and a vanished one as falling to 0', () => {
    const changes = balanceChanges(stored({ OLD: '3' }), stored({ NEW: '0.0000001' }));
    expect(changes.map((c) => [c.currency, c.delta.toString()])).toEqual([
      ['NEW', '0.0000001'],
      ['OLD', '-3'],
    ]);
  });

  it('keeps digits a float would lose', () => {
    const [change] = balanceChanges(
      stored({ X: '9007199254740993.0000001' }),
      stored({ X: '9007199254740993.0000002' }),
    );
    expect(change?.delta.toString()).toBe('0.0000001');
  });

  it('takes titles from the new reading, or the old one for a vanished currency', () => {
    expect(toStored([balanceEntry('BTC', '1', 'Bitcoin')])).toEqual({
      BTC: { title: 'Bitcoin', balance: '1' },
    });
  });

  it('announces differences that add up, per currency, to the last reading minus the first, exactly', () => {
    const decimal = fc
      .tuple(fc.integer({ min: 0, max: 10 ** 9 }), fc.integer({ min: 0, max: 9_999_999 }))
      .map(([int, frac]) => `${int}.${String(frac).padStart(7, '0')}`);
    const reading = fc.dictionary(fc.constantFrom('BTC', 'ETH', 'USDT-TRC20', 'DOGE', 'NEW'), decimal, {
      maxKeys: 5,
    });
    fc.assert(
      fc.property(fc.array(reading, { minLength: 2, maxLength: 12 }), (readings) => {
        const snapshots = readings.map(stored);
        const sums = new Map<string, Amount>();
        for (let i = 1; i < snapshots.length; i += 1) {
          for (const c of balanceChanges(snapshots[i - 1] ?? {}, snapshots[i] ?? {})) {
            sums.set(c.currency, (sums.get(c.currency) ?? Amount.ZERO).plus(c.delta));
          }
        }
        const first = snapshots[0] ?? {};
        const last = snapshots.at(-1) ?? {};
        for (const id of new Set([...Object.keys(first), ...Object.keys(last)])) {
          const expected = (Amount.parse(last[id]?.balance ?? '0') ?? Amount.ZERO).minus(
            Amount.parse(first[id]?.balance ?? '0') ?? Amount.ZERO,
          );
          expect((sums.get(id) ?? Amount.ZERO).equals(expected)).toBe(true);
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('signed', () => {
  it.each([
    ['0.0042', '+0.0042'],
    ['-1.5', '−1.5'],
    ['0', '0'],
    ['-0.00', '0'],
  ])('%s reads %s', (digits, text) => {
    expect(signed(Amount.parse(digits) ?? Amount.ZERO)).toBe(text);
  });
});

describe('Amount arithmetic', () => {
  const a = (t: string) => Amount.parse(t) ?? Amount.ZERO;
  it('subtracts and adds exactly, in plain notation, with no signed zero', () => {
    expect(a('0.3').minus(a('0.1')).toString()).toBe('0.2');
    expect(a('1e-7').plus(a('1e-7')).toString()).toBe('0.0000002');
    expect(a('1.5').minus(a('1.50')).toString()).toBe('0');
    expect(a('1').minus(a('3')).toString()).toBe('-2');
    expect(a('-2').abs().toString()).toBe('2');
    expect(a('2').abs().toString()).toBe('2');
    expect([a('-1').sign(), a('0').sign(), a('1').sign()]).toEqual([-1, 0, 1]);
    expect(a('1.50').equals(a('1.5'))).toBe(true);
    expect(a('1.5').equals(a('1.51'))).toBe(false);
  });
});
