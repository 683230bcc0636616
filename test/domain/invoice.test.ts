import { describe, expect, it } from 'vitest';
import { awaitsPayment } from '../../src/domain/invoice.js';

describe('which states await payment', () => {
  it.each([
    ['open', 'none', true],
    ['open', 'partially_paid', true],
    ['open', 'paid', false],
    ['closed', 'paid', false],
    ['closed', 'none', false],
    ['expired', 'none', false],
    ['cancelled', 'none', false],
    // A status never seen is not known to be final: the invoice may still be paid.
    ['processing', 'none', true],
    ['under_review', 'none', true],
    ['processing', 'paid', false],
  ])('status %s, payment %s: %s', (status, payStatus, awaits) => {
    expect(awaitsPayment({ status, payStatus })).toBe(awaits);
  });
});
