import { describe, expect, it } from 'vitest';
import { describeNetworkError } from '../../src/payments/wire.js';

/** The few words a network failure is logged and reported with ("payment service unavailable: …"). */
describe('a network failure in a few words', () => {
  it('is its code when it has one', () => {
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    expect(describeNetworkError(reset)).toBe('ECONNRESET');
  });

  it('is its message when it has no code, or a code that is not a name', () => {
    expect(describeNetworkError(new Error('other side closed'))).toBe('other side closed');
    expect(describeNetworkError(Object.assign(new Error('socket hang up'), { code: 104 }))).toBe(
      'socket hang up',
    );
  });

  it('is "network error" when what failed is not even an Error', () => {
    expect(describeNetworkError('ECONNRESET')).toBe('network error');
    expect(describeNetworkError(undefined)).toBe('network error');
  });
});
