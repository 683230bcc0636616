import { describe, expect, it } from 'vitest';
import { parseInvoiceText, parsePaymentLink } from '../../src/listeners/invoice-input.js';

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
    ['watcher', { kind: 'invalid', verb: 'show', text: 'watcher' }],
  ])('reads %j', (text, expected) => {
    expect(parseInvoiceText(text, PAY)).toEqual(expected);
  });
});

describe('parsePaymentLink', () => {
  it.each([
    [`https://pay.example.com/pay/${ID}/`, PAY, ID],
    [`https://pay.example.com/pay/${ID}?lang=en&amp;x=1#top`, PAY, ID],
    [`http://PAY.example.com/pay/${ID.toUpperCase()}`, PAY, ID],
    [`https://pay.example.com/app/pay/${ID}`, new URL('https://pay.example.com/app/'), ID],
    [`https://anywhere.example/pay/${ID}`, undefined, ID],
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
  ])('rejects %s', (url, payUrl) => {
    expect(parsePaymentLink(url, payUrl)).toBeUndefined();
  });
});
