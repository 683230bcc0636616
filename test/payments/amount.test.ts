import fc from 'fast-check';
import { parse as parseJson } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { Amount, MAX_AMOUNT_LENGTH } from '../../src/payments/amount.js';
import { balanceResponseSchema } from '../../src/payments/schemas.js';

/** Decimal strings in JSON number syntax: any integer part, up to `maxDecimals` after the point. */
const decimal = (maxDecimals: number) =>
  fc
    .tuple(
      fc.boolean(),
      fc.oneof(fc.constant('0'), fc.stringMatching(/^[1-9]\d{0,40}$/)),
      fc.stringMatching(new RegExp(`^\\d{0,${maxDecimals}}$`)),
    )
    .map(([negative, int, frac]) => `${negative ? '-' : ''}${int}${frac ? `.${frac}` : ''}`);

/** How an amount reads: as sent, except that a zero never carries a sign. */
const shown = (text: string) => (/^-0(\.0*)?$/.test(text) ? text.slice(1) : text);

/** What the client does to a balance answer, minus the socket. */
const readBalance = (wire: string) => balanceResponseSchema.parse(parseJson(wire)).result;

describe('Amount', () => {
  it('keeps every digit of any decimal it is given', () => {
    fc.assert(
      fc.property(decimal(30), (text) => {
        expect(Amount.parse(text)?.toString()).toBe(shown(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('round-trips amounts through the JSON wire format digit for digit', () => {
    fc.assert(
      fc.property(decimal(7), (digits) => {
        const [entry] = readBalance(
          `{"status":"success","result":[{"id":"BTC","title":"Bitcoin","balance":${digits}}]}`,
        );
        expect(entry?.balance.toString()).toBe(shown(digits));
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    ['0.0000001', '0.0000001'], // seven decimals, below 1e-6: a float would print 1e-7
    ['0.0000009', '0.0000009'],
    ['9007199254740993', '9007199254740993'], // 2^53 + 1: a float would print ...992
    ['123456789012345678901234567890.1234567', '123456789012345678901234567890.1234567'],
    ['1.50', '1.50'], // trailing zero as sent
    ['1e-7', '0.0000001'], // exponent notation from the wire is expanded, never shown as is
    ['2.5E-10', '0.00000000025'],
    ['1.5e+3', '1500'],
    ['-12.75', '-12.75'],
    ['-0', '0'], // a signed zero is shown without its sign
    ['-0.00', '0.00'],
    ['-0e3', '0'],
    ['-0.0000001', '-0.0000001'],
  ])('shows %s from the wire as %s', (wire, shown) => {
    const [entry] = readBalance(`{"result":[{"id":"X","title":"X","balance":${wire}}]}`);
    expect(entry?.balance.toString()).toBe(shown);
  });

  it('never produces exponent notation, whatever the exponent', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[1-9]\d{0,10}(\.\d{1,10})?$/),
        fc.integer({ min: -60, max: 60 }),
        (m, e) => {
          const text = Amount.parse(`${m}e${e}`)?.toString();
          expect(text).toMatch(/^\d+(\.\d+)?$/);
        },
      ),
    );
  });

  it.each(['0', '0.0000000', '-0', '0e5', '0.0'])('knows %s is zero', (text) => {
    expect(Amount.parse(text)?.isZero()).toBe(true);
  });

  it.each(['0.0000001', '-0.0000001', '1', '100000000000000000000001'])('knows %s is not zero', (text) => {
    expect(Amount.parse(text)?.isZero()).toBe(false);
  });

  it.each(['', '01', '.5', '1.', 'NaN', 'Infinity', '1e', ' 1', '1 ', '0x10', '1,5', '+1', '--1'])(
    'rejects %j, which is not a JSON number',
    (text) => {
      expect(Amount.parse(text)).toBeUndefined();
    },
  );

  it('rejects absurd lengths instead of expanding them', () => {
    expect(Amount.parse('1e999999999')).toBeUndefined();
    expect(Amount.parse(`1e${MAX_AMOUNT_LENGTH}`)).toBeUndefined();
    expect(Amount.parse(`1e${MAX_AMOUNT_LENGTH - 1}`)?.toString()).toBe(
      `1${'0'.repeat(MAX_AMOUNT_LENGTH - 1)}`,
    );
    expect(Amount.parse('9'.repeat(MAX_AMOUNT_LENGTH + 1))).toBeUndefined();
    expect(Amount.parse('9'.repeat(MAX_AMOUNT_LENGTH))?.toString()).toHaveLength(MAX_AMOUNT_LENGTH);
  });

  it('accepts a numeric string too, should the service start quoting amounts', () => {
    const [entry] = readBalance('{"result":[{"id":"BTC","title":"Bitcoin","balance":"0.0000001"}]}');
    expect(entry?.balance.toString()).toBe('0.0000001');
  });
});
