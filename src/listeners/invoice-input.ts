import { type InvoiceId, parseInvoiceId } from '../payments/index.js';

/** What `/invoice` can be asked to do with an invoice. */
export type InvoiceVerb = 'show' | 'watch' | 'unwatch';

export type InvoiceInput =
  | { kind: 'usage'; verb: InvoiceVerb }
  | { kind: 'help' }
  | { kind: 'watching' }
  | { kind: 'invoice'; verb: InvoiceVerb; id: InvoiceId }
  | { kind: 'invalid'; verb: InvoiceVerb; text: string };

const VERBS: Readonly<Record<string, InvoiceVerb>> = { watch: 'watch', unwatch: 'unwatch' };

/** An id in any case, or a payment link, alone. */
export function parseInvoiceRef(text: string, payUrl: URL | undefined): InvoiceId | undefined {
  return parseInvoiceId(text) ?? parsePaymentLink(text, payUrl);
}

/**
 * What follows `/invoice`: `help`, `watching`, or an invoice (an id in any case, or a payment
 * link, plain or as Slack sends it with `should_escape`: `<url>` or `<url|label>`), after an
 * optional `watch` or `unwatch`.
 */
export function parseInvoiceText(text: string, payUrl: URL | undefined): InvoiceInput {
  const trimmed = text.trim();
  const lower = trimmed.toLowerCase();
  if (lower === 'help') return { kind: 'help' };
  if (lower === 'watching') return { kind: 'watching' };
  const [first = '', ...rest] = trimmed.split(/\s+/);
  const verb = VERBS[first.toLowerCase()];
  const ref = verb ? rest.join(' ') : trimmed;
  const as = verb ?? 'show';
  if (ref === '') return { kind: 'usage', verb: as };
  const id = parseInvoiceRef(ref, payUrl);
  return id ? { kind: 'invoice', verb: as, id } : { kind: 'invalid', verb: as, text: ref };
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
