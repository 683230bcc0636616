import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cut, graphemeEnd } from '../src/text.js';

const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe('cut', () => {
  it('leaves text that fits alone', () => {
    expect(cut('abc', 3)).toBe('abc');
    expect(cut('', 0)).toBe('');
  });

  it('cuts to exactly the limit when that is a boundary', () => {
    expect(cut('abcdef', 4)).toBe('abcd');
  });

  it('never leaves half an emoji: 199 letters and three emoji cut at 200', () => {
    expect(cut(`${'a'.repeat(199)}😀😀😀`, 200)).toBe('a'.repeat(199));
    expect(cut(`${'a'.repeat(198)}😀😀😀`, 200)).toBe(`${'a'.repeat(198)}😀`);
  });

  it('keeps a grapheme cluster whole: a family, a flag, a letter and its accent', () => {
    const family = '👩‍👩‍👧‍👦';
    expect(cut(`x${family}`, 5)).toBe('x');
    expect(cut('ab🇫🇷', 4)).toBe('ab');
    expect(cut('abe\u0301', 3)).toBe('ab');
  });

  it('never produces a lone surrogate or more than the limit, whatever the text', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 60 }),
        fc.integer({ min: 0, max: 80 }),
        (text, max) => {
          const out = cut(text, max);
          expect(out.length).toBeLessThanOrEqual(max);
          expect(text.startsWith(out)).toBe(true);
          expect(out).not.toMatch(lone);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('graphemeEnd', () => {
  it('finds where the cluster holding an index ends', () => {
    expect(graphemeEnd('a😀b', 0)).toBe(1);
    expect(graphemeEnd('a😀b', 1)).toBe(3);
    expect(graphemeEnd('a😀b', 2)).toBe(3);
    expect(graphemeEnd('a😀b', 3)).toBe(4);
  });
});
