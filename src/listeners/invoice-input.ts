import { type InvoiceId, parseInvoiceId } from '../payments/index.js';

export type InvoiceInput =
  | { kind: 'usage' }
  | { kind: 'help' }
  | { kind: 'invoice'; id: InvoiceId }
  | { kind: 'invalid'; text: string };

/**
 * What follows `/invoice`: an id in any case, a payment link (plain, or as Slack sends it with
 * `should_escape`: `<url>` or `<url|label>`), `help`, or nothing.
 */
export function parseInvoiceText(text: string, payUrl: URL | undefined): InvoiceInput {
  const trimmed = text.trim();
  if (trimmed === '') return { kind: 'usage' };
  if (trimmed.toLowerCase() === 'help') return { kind: 'help' };
  const id = parseInvoiceId(trimmed) ?? parsePaymentLink(trimmed, payUrl);
  return id ? { kind: 'invoice', id } : { kind: 'invalid', text: trimmed };
}

/**
 * The invoice id of a payment link `{pay_url}/pay/<id>`. With `payUrl` set, the link must be on
 * its host and under its path; without it, any http(s) host will do (the request still goes only
 * to the configured service). Query and fragment are ignored.
 */
export function parsePaymentLink(text: string, payUrl: URL | undefined): InvoiceId | undefined {
  const unwrapped = /^<([^|<>]+)(?:\|[^<>]*)?>$/.exec(text)?.[1] ?? text;
  const raw = unwrapped.replace(/&amp;/g, '&');
  if (!URL.canParse(raw)) return undefined;
  const url = new URL(raw);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  const match = /^(.*)\/pay\/([^/]+)\/?$/.exec(url.pathname);
  if (!match?.[2]) return undefined;
  if (payUrl) {
    const prefix = payUrl.pathname.replace(/\/+$/, '');
    if (url.host !== payUrl.host || match[1] !== prefix) return undefined;
  }
  return parseInvoiceId(match[2]);
}
