import { describe, expect, it } from 'vitest';
import { findInvoiceRefs, parseInvoiceText } from '../../src/listeners/invoice-input.js';

/**
 * Where `/invoice` and the message shortcut draw their lines: a word is letters only, a word
 * near none of `/invoice`'s alone is a mistyped id, and ids touching a link are still found in a
 * message whatever shape its blocks have.
 */
const PAY = new URL('https://pay.example.com');
const A = '5b8e1f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b';
const B = '9d2c7b61-0a4e-4f3b-9c8d-7e6f5a4b3c2d';

describe('/invoice reading its first word', () => {
  it('reads a word near none of its own, alone, as a mistyped id', () => {
    expect(parseInvoiceText('hello', PAY)).toEqual({ kind: 'invalid', verb: 'show', text: 'hello' });
  });

  it('reads letters followed by digits as a mistyped id, not a mistyped word', () => {
    expect(parseInvoiceText('wach1', PAY)).toEqual({ kind: 'invalid', verb: 'show', text: 'wach1' });
  });

  it('reads a word near one of its own, alone, as that word mistyped', () => {
    expect(parseInvoiceText('wach', PAY)).toEqual({
      kind: 'unknown_word',
      word: 'wach',
      suggestion: 'watch',
      rest: '',
    });
  });

  it('reads a word followed by an id as a word it does not take', () => {
    expect(parseInvoiceText(`hello ${A}`, PAY)).toEqual({
      kind: 'unknown_word',
      word: 'hello',
      suggestion: undefined,
      rest: A,
    });
  });
});

describe('the invoices a message mentions', () => {
  it('finds the ids right before and right after a link it skips', () => {
    const text = `${A}<https://elsewhere.example/page>${B}`;
    expect(findInvoiceRefs({ text }, PAY)).toEqual({ ids: [A, B], more: 0 });
  });

  it('reads past empty fields of blocks and attachments', () => {
    const message = {
      text: null,
      blocks: [null, { type: 'section', text: null, accessory: { value: A } }],
      attachments: [0, false, B],
    };
    expect(findInvoiceRefs(message, PAY)).toEqual({ ids: [A, B], more: 0 });
  });
});
