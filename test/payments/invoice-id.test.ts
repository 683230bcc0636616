import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseInvoiceId } from '../../src/payments/invoice-id.js';

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('parseInvoiceId', () => {
  it('accepts any 8-4-4-4-12 hexadecimal id in any case, whatever its version and variant bits', () => {
    const hex = (n: number) => fc.stringMatching(new RegExp(`^[0-9a-fA-F]{${n}}$`));
    fc.assert(
      fc.property(fc.tuple(hex(8), hex(4), hex(4), hex(4), hex(12)), (parts) => {
        const id = parts.join('-');
        expect(parseInvoiceId(id)).toBe(id.toLowerCase());
      }),
      { numRuns: 1000 },
    );
  });

  it('accepts ids of every UUID version, including nil and max', () => {
    expect(parseInvoiceId('00000000-0000-0000-0000-000000000000')).toBeDefined();
    expect(parseInvoiceId('FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF')).toBe(
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
    );
    fc.assert(
      fc.property(fc.uuid(), (id) => {
        expect(parseInvoiceId(id)).toBe(id);
      }),
    );
  });

  it.each([
    '',
    '../balance',
    '..%2Fbalance',
    '5b8e1f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b/../../balance',
    '5b8e1f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b?x=1',
    ' 5b8e1f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b',
    '5b8e1f2a3c4d4e5f8a9b0c1d2e3f4a5b',
    '{5b8e1f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b}',
    '5b8e1f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5g',
    '5b8e1f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b\n',
  ])('rejects %j', (text) => {
    expect(parseInvoiceId(text)).toBeUndefined();
  });

  it('never lets anything but hexadecimal digits and dashes through, whatever is typed', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (text) => {
        const id = parseInvoiceId(text);
        if (id !== undefined) expect(id).toMatch(UUID_SHAPE);
      }),
      { numRuns: 2000 },
    );
  });
});
