import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../src/payments/answers.js';

/** RFC 9110 §10.2.3: delta-seconds are whole seconds; anything else that is not a date means nothing. */
describe('a Retry-After that is not whole seconds', () => {
  it.each(['1.5', '10 seconds', '30s'])('reads %j as no wait given', (value) => {
    expect(parseRetryAfter(value, Date.parse('2026-11-21T12:00:00Z'))).toBeUndefined();
  });
});
