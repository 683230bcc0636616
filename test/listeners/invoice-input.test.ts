import { describe, expect, it } from 'vitest';
import {
  findInvoiceRefs,
  messageTexts,
  parseInvoiceText,
  parsePaymentLink,
} from '../../src/listeners/invoice-input.js';

const ID = '5b8e1f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b';
const PAY = new URL('https://pay.example.com');

describe('parseInvoiceText', () => {
  it.each([
    ['', { kind: 'usage', verb: 'show' }],
    ['   ', { kind: 'usage', verb: 'show' }],
    ['help', { kind: 'help' }],
    [' HELP ', { kind: 'help' }],
    ['watching', { kind: 'watching' }],
    [' Watching ', { kind: 'watching' }],
    [ID, { kind: 'invoice', verb: 'show', id: ID }],
    [`  ${ID.toUpperCase()}\t`, { kind: 'invoice', verb: 'show', id: ID }],
    [`https://pay.example.com/pay/${ID}`, { kind: 'invoice', verb: 'show', id: ID }],
    [`<https://pay.example.com/pay/${ID}>`, { kind: 'invoice', verb: 'show', id: ID }],
    [`<https://pay.example.com/pay/${ID}|Pay now>`, { kind: 'invoice', verb: 'show', id: ID }],
    ['nope', { kind: 'invalid', verb: 'show', text: 'nope' }],
    [`${ID} ${ID}`, { kind: 'invalid', verb: 'show', text: `${ID} ${ID}` }],
    [`watch ${ID}`, { kind: 'invoice', verb: 'watch', id: ID }],
    [`WATCH   <https://pay.example.com/pay/${ID}|pay>`, { kind: 'invoice', verb: 'watch', id: ID }],
    [`unwatch ${ID.toUpperCase()}`, { kind: 'invoice', verb: 'unwatch', id: ID }],
    ['watch', { kind: 'usage', verb: 'watch' }],
    ['unwatch  ', { kind: 'usage', verb: 'unwatch' }],
    ['watch me now', { kind: 'invalid', verb: 'watch', text: 'me now' }],
    ['watcher', { kind: 'unknown_word', word: 'watcher', suggestion: 'watch', rest: '' }],
    ['help me', { kind: 'help' }],
    ['Watching  this channel', { kind: 'watching' }],
  ])('reads %j', (text, expected) => {
    expect(parseInvoiceText(text, PAY)).toEqual(expected);
  });

  it.each([
    [`wach ${ID}`, 'wach', 'watch', ID],
    [`WACH  ${ID}`, 'WACH', 'watch', ID],
    [`wtach ${ID}`, 'wtach', 'watch', ID],
    [
      `unwach <https://pay.example.com/pay/${ID}|pay>`,
      'unwach',
      'unwatch',
      `<https://pay.example.com/pay/${ID}|pay>`,
    ],
    ['watchng', 'watchng', 'watching', ''],
    ['hepl', 'hepl', 'help', ''],
    ['wach it', 'wach', 'watch', 'it'],
    [`show ${ID}`, 'show', undefined, ID],
  ])(
    'reads a first word it does not take in %j, with the one it most likely meant',
    (text, word, suggestion, rest) => {
      expect(parseInvoiceText(text, PAY)).toEqual({ kind: 'unknown_word', word, suggestion, rest });
    },
  );

  it.each([
    ['order 1042', 'order 1042'],
    ['hi', 'hi'],
    [`${ID.slice(0, 8)} ${ID}`, `${ID.slice(0, 8)} ${ID}`],
  ])('reads %j as a mistyped id, not a word', (text, quoted) => {
    expect(parseInvoiceText(text, PAY)).toEqual({ kind: 'invalid', verb: 'show', text: quoted });
  });

  it.each([
    [`https://evil.example/pay/${ID}`, 'show', 'evil.example'],
    [`<https://pay.example.com.evil.example/pay/${ID}|pay now>`, 'show', 'pay.example.com.evil.example'],
    [`watch https://PAY.example.org:8443/pay/${ID}`, 'watch', 'pay.example.org:8443'],
  ])('names the host of a link on another host than the payment links’: %j', (text, verb, host) => {
    const ref = text.replace(/^watch /, '');
    expect(parseInvoiceText(text, PAY)).toEqual({ kind: 'elsewhere', verb, text: ref, host, payUrl: PAY });
  });

  it('takes a link on any host when no payment link host is set, and a wrong path on the right host is a typo', () => {
    expect(parseInvoiceText(`https://evil.example/pay/${ID}`, undefined)).toEqual({
      kind: 'invoice',
      verb: 'show',
      id: ID,
    });
    const wrongPath = `https://pay.example.com/other/pay/${ID}`;
    expect(parseInvoiceText(wrongPath, PAY)).toEqual({ kind: 'invalid', verb: 'show', text: wrongPath });
    expect(parseInvoiceText('ftp://evil.example/x', PAY)).toEqual({
      kind: 'invalid',
      verb: 'show',
      text: 'ftp://evil.example/x',
    });
  });
});

describe('parsePaymentLink', () => {
  it.each([
    [`https://pay.example.com/pay/${ID}/`, PAY, ID],
    [`https://pay.example.com/pay/${ID}?lang=en&amp;x=1#top`, PAY, ID],
    [`http://PAY.example.com/pay/${ID.toUpperCase()}`, PAY, ID],
    [`https://pay.example.com/app/pay/${ID}`, new URL('https://pay.example.com/app/'), ID],
    [`https://anywhere.example/pay/${ID}`, undefined, ID],
    [`https://pay.example.com/app/pay/${ID}`, new URL('https://pay.example.com/app//'), ID],
  ])('finds the id in %s', (url, payUrl, id) => {
    expect(parsePaymentLink(url, payUrl)).toBe(id);
  });

  it.each([
    [`https://evil.example/pay/${ID}`, PAY],
    [`https://pay.example.com.evil.example/pay/${ID}`, PAY],
    [`https://pay.example.com:8443/pay/${ID}`, PAY],
    [`https://pay.example.com/other/pay/${ID}`, PAY],
    [`https://pay.example.com/app/pay/${ID}`, PAY],
    [`https://pay.example.com/pay/${ID}/extra`, PAY],
    ['https://pay.example.com/pay/../balance', PAY],
    [`javascript://pay.example.com/pay/${ID}`, undefined],
    [`mailto:x@pay.example.com?pay/${ID}`, undefined],
    ['not a url', undefined],
    [`see <https://pay.example.com/pay/${ID}>`, PAY],
    [`<https://pay.example.com/pay/${ID}> too`, PAY],
  ])('rejects %s', (url, payUrl) => {
    expect(parsePaymentLink(url, payUrl)).toBeUndefined();
  });
});

describe('findInvoiceRefs', () => {
  const OTHER = '9d2c7b61-0a4e-4f3b-9c8d-7e6f5a4b3c2d';

  it('finds ids and payment links in text, blocks and attachments, each once, in order', () => {
    const message = {
      text: `Customer says <https://pay.example.com/pay/${ID}|this one> is paid, also ${OTHER.toUpperCase()}`,
      blocks: [{ type: 'rich_text', elements: [{ type: 'link', url: `https://pay.example.com/pay/${ID}` }] }],
      attachments: [{ fallback: `https://pay.example.com/pay/${OTHER}`, title: 'ticket 1042' }],
    };
    expect(findInvoiceRefs(message, PAY)).toEqual({ ids: [ID, OTHER], more: 0 });
  });

  it('follows where a link goes, not what its label says', () => {
    const disguised = `<https://evil.example/pay/${ID}|https://pay.example.com/pay/${OTHER}>`;
    expect(findInvoiceRefs({ text: `see ${disguised}` }, PAY)).toEqual({ ids: [], more: 0 });
    // Slack escapes < and > inside a label; a label may hold anything else, | included.
    const honest = `<http://pay.example.com/pay/${ID}|invoice &lt;7&gt; | paid?>`;
    expect(findInvoiceRefs({ text: `${honest} and <https://pay.example.com/pay/${OTHER}>` }, PAY)).toEqual({
      ids: [ID, OTHER],
      more: 0,
    });
  });

  it('skips a link on another host, id and all, as /invoice does', () => {
    expect(findInvoiceRefs({ text: `see https://evil.example/pay/${ID}` }, PAY)).toEqual({
      ids: [],
      more: 0,
    });
    expect(findInvoiceRefs({ text: `see <https://evil.example/pay/${ID}|pay>` }, PAY)).toEqual({
      ids: [],
      more: 0,
    });
  });

  it('finds nothing in a typo or an id cut short', () => {
    expect(findInvoiceRefs({ text: `${ID.slice(0, -1)} and 5b8e1f2a-3c4d-4e5f-8a9b` }, PAY)).toEqual({
      ids: [],
      more: 0,
    });
  });

  it('looks up ten at most and counts the rest', () => {
    const ids = Array.from(
      { length: 13 },
      (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    );
    expect(findInvoiceRefs({ text: ids.join(' ') }, PAY)).toEqual({ ids: ids.slice(0, 10), more: 3 });
  });

  it('reads all of a message’s strings, however deep, and nothing else', () => {
    expect(
      messageTexts({ text: 'a', blocks: [{ x: [{ y: 'b' }] }], attachments: [{ n: 1, z: 'c' }], ts: '1.2' }),
    ).toEqual(['a', 'b', 'c']);
    expect(messageTexts(undefined)).toEqual([]);
    expect(messageTexts({ text: 5, blocks: [null, 0, false, ['d']], attachments: 'e' })).toEqual(['d', 'e']);
  });

  it('stops twelve levels down, so a hostile payload cannot make it dig forever', () => {
    const nest = (depth: number, leaf: string): unknown => (depth === 0 ? leaf : [nest(depth - 1, leaf)]);
    expect(messageTexts({ blocks: nest(12, 'deep') })).toEqual(['deep']);
    expect(messageTexts({ blocks: nest(13, 'too deep') })).toEqual([]);
    const objects = (depth: number, leaf: string): unknown =>
      depth === 0 ? leaf : { x: objects(depth - 1, leaf) };
    expect(messageTexts({ attachments: objects(12, 'deep') })).toEqual(['deep']);
    expect(messageTexts({ attachments: objects(13, 'too deep') })).toEqual([]);
  });
});

describe('findInvoiceRefs in a sentence', () => {
  it('leaves out every punctuation mark after a link, not only the last', () => {
    expect(findInvoiceRefs({ text: `(see https://pay.example.com/pay/${ID}).` }, PAY)).toEqual({
      ids: [ID],
      more: 0,
    });
  });

  it('leaves the punctuation after a bare link out', () => {
    expect(
      findInvoiceRefs(
        {
          text: `Paid https://pay.example.com/pay/${ID}, (https://pay.example.com/pay/${ID.toUpperCase()}).`,
        },
        PAY,
      ),
    ).toEqual({
      ids: [ID],
      more: 0,
    });
  });
});
