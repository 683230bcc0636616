import { type InvoiceId, parseInvoiceId } from '../payments/index.js';
import { nearestWord } from './commands/words.js';

/** What `/invoice` can be asked to do with an invoice. */
export type InvoiceVerb = 'show' | 'watch' | 'unwatch';

type InvoiceInput =
  | { kind: 'usage'; verb: InvoiceVerb }
  | { kind: 'help' }
  | { kind: 'watching' }
  | { kind: 'invoice'; verb: InvoiceVerb; id: InvoiceId }
  | { kind: 'invalid'; verb: InvoiceVerb; text: string }
  /** A link on another host than `PAYMENT_PAY_URL`'s (`payUrl`): `host` is the one it is on. */
  | { kind: 'elsewhere'; verb: InvoiceVerb; text: string; host: string; payUrl: URL }
  /** A first word `/invoice` does not take (`wach <id>`), with the one it most likely meant. */
  | { kind: 'unknown_word'; word: string; suggestion: InvoiceWord | undefined; rest: string };

const VERBS: Readonly<Record<string, InvoiceVerb>> = { watch: 'watch', unwatch: 'unwatch' };

/** The words `/invoice` takes before anything else. */
const INVOICE_WORDS = ['watch', 'unwatch', 'watching', 'help'] as const;
type InvoiceWord = (typeof INVOICE_WORDS)[number];

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
  const [first = '', ...rest] = trimmed.split(/\s+/);
  // As `/balance` reads its words: what follows `help` or `watching` changes nothing.
  const lower = first.toLowerCase();
  if (lower === 'help') return { kind: 'help' };
  if (lower === 'watching') return { kind: 'watching' };
  const verb = VERBS[lower];
  const ref = verb ? rest.join(' ') : trimmed;
  const as = verb ?? 'show';
  if (ref === '') return { kind: 'usage', verb: as };
  const id = parseInvoiceRef(ref, payUrl);
  if (id) return { kind: 'invoice', verb: as, id };
  if (!verb) {
    const unknown = unknownWord(first, rest.join(' '), payUrl);
    if (unknown) return unknown;
  }
  const host = payUrl && httpLink(ref)?.host;
  return host && host !== payUrl.host
    ? { kind: 'elsewhere', verb: as, text: ref, host, payUrl }
    : { kind: 'invalid', verb: as, text: ref };
}

/**
 * `first` as a mistyped word of `/invoice`: a word of letters one edit or two from one (`wach`,
 * `watchng`), or followed by an invoice (`foo <id>`). Anything else is read as a mistyped invoice
 * id.
 */
function unknownWord(first: string, rest: string, payUrl: URL | undefined): InvoiceInput | undefined {
  if (!/^\p{L}+$/u.test(first)) return undefined;
  const suggestion = nearestWord(first, INVOICE_WORDS);
  if (suggestion === undefined && !parseInvoiceRef(rest, payUrl)) return undefined;
  return { kind: 'unknown_word', word: first, suggestion, rest };
}

/** An http(s) URL, plain or as Slack sends it with `should_escape` (`<url>`, `<url|label>`). */
function httpLink(text: string): URL | undefined {
  const unwrapped = /^<([^|<>]+)(?:\|[^<>]*)?>$/.exec(text)?.[1] ?? text;
  const raw = unwrapped.replace(/&amp;/g, '&');
  if (!URL.canParse(raw)) return undefined;
  const url = new URL(raw);
  return url.protocol === 'https:' || url.protocol === 'http:' ? url : undefined;
}

/**
 * The invoice id of a payment link `{pay_url}/pay/<id>`. With `payUrl` set, the link must be on
 * its host and under its path; without it, any http(s) host will do (the request still goes only
 * to the configured service). Query and fragment are ignored.
 */
export function parsePaymentLink(text: string, payUrl: URL | undefined): InvoiceId | undefined {
  const url = httpLink(text);
  if (!url) return undefined;
  const match = /^(.*)\/pay\/([^/]+)\/?$/.exec(url.pathname);
  if (!match?.[2]) return undefined;
  if (payUrl) {
    const prefix = payUrl.pathname.replace(/\/+$/, '');
    if (url.host !== payUrl.host || match[1] !== prefix) return undefined;
  }
  return parseInvoiceId(match[2]);
}

/** The most invoices one message shortcut looks up. */
const MAX_FOUND = 10;

/** Every string in a message's text, blocks and attachments, where people and apps put links. */
export function messageTexts(message: unknown): string[] {
  const texts: string[] = [];
  const visit = (value: unknown, depth: number): void => {
    if (depth > 12) return;
    if (typeof value === 'string') texts.push(value);
    // An object's values, or an array's items.
    else if (value && typeof value === 'object') for (const v of Object.values(value)) visit(v, depth + 1);
  };
  const m = (message ?? {}) as { text?: unknown; blocks?: unknown; attachments?: unknown };
  visit(m.text, 0);
  visit(m.blocks, 0);
  visit(m.attachments, 0);
  return texts;
}

const LINK = /<(https?:\/\/[^|<>\s]+)(?:\|[^<>]*)?>|https?:\/\/[^\s<>|"']+/gi;
const BARE_ID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;

/**
 * The invoices a message mentions, in order, each once, by the rules of `/invoice`: payment
 * links on the `{pay_url}` host, and bare ids in any case. A link anywhere else is skipped whole,
 * its id included: `https://elsewhere/pay/<id>` is not this merchant's payment link.
 */
export function findInvoiceRefs(
  message: unknown,
  payUrl: URL | undefined,
): { ids: InvoiceId[]; more: number } {
  const found: InvoiceId[] = [];
  for (const text of messageTexts(message)) {
    const withoutLinks = text.replace(LINK, (whole, wrapped?: string) => {
      // A bare link typed in a sentence ends before its punctuation: "…/pay/<id>, thanks".
      const id = parsePaymentLink(wrapped ?? whole.replace(/[.,;:!?)\]]+$/, ''), payUrl);
      if (id) found.push(id);
      return ' ';
    });
    for (const [bare] of withoutLinks.matchAll(BARE_ID)) {
      const id = parseInvoiceId(bare);
      if (id) found.push(id);
    }
  }
  const unique = [...new Set(found)];
  return { ids: unique.slice(0, MAX_FOUND), more: Math.max(0, unique.length - MAX_FOUND) };
}
