import { describe, expect, it } from 'vitest';
import { Amount } from '../../src/payments/amount.js';

const abs = (text: string) => Amount.parse(text)?.abs().toString();

describe('an amount without its sign', () => {
  it.each([
    ['1.50', '1.50'], // a positive amount is kept digit for digit
    ['0.00', '0.00'],
    ['-0.00', '0.00'],
    ['-1.50', '1.5'],
    ['-0.0000001', '0.0000001'],
  ])('of %s reads %s', (text, shown) => {
    expect(abs(text)).toBe(shown);
  });
});
