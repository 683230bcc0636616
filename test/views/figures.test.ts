import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StoredBalance } from '../../src/domain/balance.js';
import { Amount } from '../../src/payments/index.js';
import { digestMessage, subscribedMessage } from '../../src/views/feed.js';
import { groupDigits, grouped } from '../../src/views/figures.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { NOW } from '../support/factories.js';

/** Any decimal the service may send, in JSON number syntax: huge, tiny, negative, long fractions, exponents. */
const serviceDecimal = fc
  .tuple(
    fc.boolean(),
    fc.oneof(fc.constant('0'), fc.stringMatching(/^[1-9]\d{0,80}$/)),
    fc.option(fc.stringMatching(/^\d{1,60}$/), { nil: undefined }),
    fc.option(fc.integer({ min: -40, max: 40 }), { nil: undefined }),
  )
  .map(([negative, whole, fraction, exponent]) => {
    const sign = negative ? '-' : '';
    const point = fraction === undefined ? '' : `.${fraction}`;
    return `${sign}${whole}${point}${exponent === undefined ? '' : `e${exponent}`}`;
  });

describe('amounts grouped for reading', () => {
  it('gives back the exact digits once the commas are removed, for any decimal the service may send', () => {
    fc.assert(
      fc.property(serviceDecimal, (raw) => {
        const amount = Amount.parse(raw);
        if (amount === undefined) return; // too long to read at all: refused before any view
        const shown = grouped(amount);
        expect(shown.replaceAll(',', '')).toBe(amount.toString());
        const [whole = '', fraction] = shown.replace('-', '').split('.');
        // Commas only between thousands of the integer part; none in the fraction.
        expect(whole).toMatch(/^\d{1,3}(?:,\d{3})*$/);
        if (fraction !== undefined) expect(fraction).toMatch(/^\d+$/);
      }),
      { numRuns: 500 },
    );
  });

  it('groups the integer part only, keeping the sign, trailing zeros and every fractional digit', () => {
    expect(groupDigits('1234567.89')).toBe('1,234,567.89');
    expect(groupDigits('-1000.0000')).toBe('-1,000.0000');
    expect(groupDigits('999')).toBe('999');
    expect(groupDigits('0.000000012345678')).toBe('0.000000012345678');
    expect(groupDigits('123456789012345678901234567890')).toBe('123,456,789,012,345,678,901,234,567,890');
  });
});

const coins = (pairs: Record<string, string>): StoredBalance =>
  Object.fromEntries(Object.entries(pairs).map(([id, balance]) => [id, { title: `${id} coin`, balance }]));

describe('the digest, readable and still exact', () => {
  const yesterday = new Date(NOW.getTime() - 86_400_000);
  const digest = (balances: StoredBalance, before: StoredBalance) =>
    digestMessage({ asOf: NOW, rises: 1, falls: 1, balances, before, beforeAt: yesterday });

  it('folds the coins at 0 that did not move into one line, and lists those that moved to or from 0', () => {
    const message = digest(
      coins({ DOGE: '1234567.89', BTC: '0', ETH: '0', LTC: '0', TRX: '0', XMR: '0', SOL: '5' }),
      coins({ DOGE: '1000000', BTC: '0.5', ETH: '0', LTC: '0', TRX: '0.00', XMR: '0' }),
    );
    expectValidMessage(message);
    const text = visibleText(message);
    expect(text).toContain('*DOGE coin*\n1,234,567.89 DOGE · +234,567.89 in 24 h');
    expect(text).toContain('*BTC coin*\n0 BTC · −0.5 in 24 h');
    expect(text).toContain('*SOL coin*\n5 SOL · +5 in 24 h');
    expect(text).toContain('and 4 more at 0');
    expect(text).not.toMatch(/ETH|LTC|TRX|XMR/);
    // The notification text keeps every amount ungrouped, for a copy or a screen reader.
    expect(message.text).toBe(
      'Daily balance digest: The feed saw 1 rise and 1 fall in the last 24 hours. Balances: 1234567.89 DOGE, 0 BTC, 5 SOL',
    );
  });

  it('says how many coins are at 0 when none moved or holds funds', () => {
    const message = digest(coins({ BTC: '0', ETH: '0' }), coins({ BTC: '0' }));
    expectValidMessage(message);
    expect(visibleText(message)).toContain('2 currencies at 0');
    expect(message.text).toBe('Daily balance digest: The feed saw 1 rise and 1 fall in the last 24 hours.');
  });
});

describe('the confirmation of a new feed, readable', () => {
  it('shows the starting balance grouped and folds the coins at 0 into one line', () => {
    const message = subscribedMessage({
      channelId: 'G0FIN',
      userId: 'U0A',
      digest: '09:00 UTC',
      balances: coins({ DOGE: '1234567.89', BTC: '0', ETH: '0.000' }),
      readAt: NOW,
      pollSeconds: 60,
    });
    expectValidMessage(message);
    const text = visibleText(message);
    expect(text).toContain('*DOGE coin*\n1,234,567.89 DOGE');
    expect(text).toContain('and 2 more at 0');
    expect(text).not.toMatch(/BTC|ETH/);
  });
});
