import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { esc, httpUrl, link, md, mention, plainWords, slackDate, truncate } from '../../src/views/mrkdwn.js';
import { markupProblems } from '../support/block-kit.js';

/** Strings rich in Slack's control characters and the pieces of its tokens, plus arbitrary code points. */
const markupish = fc.string({
  unit: fc.oneof(
    fc.constantFrom('<', '>', '&', '|', '!', '@', '#', '^', 'channel', 'amp;', 'lt;', 'https://x', ' ', '😀'),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  ),
  maxLength: 80,
});

describe('md', () => {
  it('escapes interpolated strings and trusts the template', () => {
    expect(md`*${'<!channel> & <https://evil|Pay>'}*`.text).toBe(
      '*&lt;!channel&gt; &amp; &lt;https://evil|Pay&gt;*',
    );
  });

  it('puts each value, escaped or trusted, between the literal parts in order, their escapes read', () => {
    expect(md`${1}`.text).toBe('1');
    expect(md``.text).toBe('');
    expect(md`*A*\n${esc('x & y')} · ${2.5} ${'<b>'}${md`_${'c'}_`} end`.text).toBe(
      '*A*\nx &amp; y · 2.5 &lt;b&gt;_c_ end',
    );
  });

  it('never lets any interpolated string produce markup', () => {
    fc.assert(
      fc.property(markupish, (raw) => {
        expect(markupProblems(md`x ${raw} y`.text, 'text', false)).toEqual([]);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('truncate', () => {
  it('leaves short text alone', () => {
    expect(truncate('abc', 3)).toBe('abc');
  });

  it('cuts to the limit with an ellipsis', () => {
    expect(truncate('abcdef', 4)).toBe('abc…');
  });

  it('never cuts inside an entity, a token or a surrogate pair', () => {
    expect(truncate('ab&amp;cd', 5)).toBe('ab…');
    expect(truncate(`a ${slackDate(new Date(0)).text} b`, 20)).toBe('a…');
    expect(truncate('ab😀cd', 4)).toBe('ab…');
    expect(truncate('ab👩‍👩‍👧‍👦cd', 12)).toBe('ab…');
    expect(truncate('abe\u0301cd', 4)).toBe('ab…');
  });

  it('cuts before an unclosed token, and treats a lone & as a character', () => {
    expect(truncate('ab<cdefgh', 5)).toBe('ab…');
    expect(truncate('a & b c d', 6)).toBe('a & b…');
    expect(truncate('a &abcdefg; xyz', 6)).toBe('a &ab…');
  });

  it('keeps any escaped text valid and within the limit', () => {
    fc.assert(
      fc.property(markupish, fc.integer({ min: 2, max: 200 }), (raw, max) => {
        const cut = esc(raw, max).text;
        expect(cut.length).toBeLessThanOrEqual(max);
        expect(markupProblems(cut, 'text', false)).toEqual([]);
        expect(cut).not.toMatch(/[\uD800-\uDBFF]…$/);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('links and tokens', () => {
  it('links only http(s) URLs', () => {
    expect(httpUrl('https://pay.example.com/pay/1')).toBe('https://pay.example.com/pay/1');
    expect(httpUrl('http://pay.example.com/pay/1')).toBe('http://pay.example.com/pay/1');
    const longest = `https://x/${'a'.repeat(2990)}`;
    expect(longest).toHaveLength(3000);
    expect(httpUrl(longest)).toBe(longest);
    for (const bad of [
      'javascript:alert(1)',
      'data:text/html,x',
      'ftp://x',
      'not a url',
      '',
      `https://x/${'a'.repeat(3000)}`,
    ]) {
      expect(httpUrl(bad)).toBeUndefined();
    }
  });

  it('keeps | and > from ending the link markup early', () => {
    expect(link('https://x.example/a|b>c', 'label').text).toBe('<https://x.example/a%7Cb%3Ec|label>');
  });

  it('shows a non-http URL as escaped text, never as a link', () => {
    expect(link('javascript:alert("<x>")', 'Pay').text).toBe('javascript:alert("&lt;x&gt;")');
  });

  it('formats a date token with an ISO fallback', () => {
    expect(slackDate(new Date('2026-11-21T12:00:00.123Z')).text).toBe(
      '<!date^1795262400^{date_short_pretty} at {time}|2026-11-21T12:00:00Z>',
    );
  });

  it('mentions only well-formed user ids', () => {
    expect(mention('U123ABC').text).toBe('<@U123ABC>');
    expect(mention('<!channel>').text).toBe('&lt;!channel&gt;');
  });
});

describe('truncate, around tokens and entities', () => {
  it('keeps a token that fits, and cuts after it', () => {
    expect(truncate(`<@U12345> ${'x'.repeat(40)}`, 15)).toBe('<@U12345> xxxx…');
  });

  it('drops a token that would end exactly one past the limit rather than keep it without its ">"', () => {
    // limit = 11 - 1 = 10: the token "<@U12345>" spans 3..11, so it cannot fit.
    expect(truncate(`ab <@U12345> ${'x'.repeat(40)}`, 11)).toBe('ab…');
  });

  it('treats a six-character entity (&quot;) as one piece', () => {
    expect(truncate(`a&quot;b${'x'.repeat(40)}`, 6)).toBe('a…');
  });
});

describe('plainWords', () => {
  it('reads mrkdwn as words for a surface that shows text as written', () => {
    expect(
      plainWords(
        '*Order &lt;1&gt; &amp; co* is watched in <#C0SUPPORT> by <@U0ANA> since <!date^1700000000^{date}|2023-11-14T22:13:20Z>; see <https://pay.example.com/x|the payment page> or <https://a.example>.',
      ),
    ).toBe(
      'Order <1> & co is watched in this conversation by someone since 2023-11-14T22:13:20Z; see the payment page or https://a.example.',
    );
  });
});
