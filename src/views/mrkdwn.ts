import { CHANNEL_ID, USER_ID } from '../slack-ids.js';
import { graphemeEnd } from '../text.js';

/** Marks text this module built as safe; the only way to construct a `Mrkdwn`. */
let trust: (text: string) => Mrkdwn;

/**
 * Text that is safe to send to Slack as mrkdwn. The only ways to make one are the `md` template
 * (which escapes what is interpolated), `esc`, and the trusted constructors here (dates, links,
 * mentions). Block builders accept nothing else, so a string from the payment service or a user
 * cannot reach a text object unescaped: `<!channel>` in a title stays text, never a ping.
 */
export class Mrkdwn {
  private constructor(readonly text: string) {}

  static {
    trust = (text) => new Mrkdwn(text);
  }
}

const ELLIPSIS = '…';

/** Slack's three control characters as entities; nothing else is escaped, per Slack's docs. */
export function escapeText(raw: string): string {
  return raw.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Cuts already-safe Slack text to at most `max` UTF-16 units, ending with "…" when cut. Never cuts
 * inside an entity (`&amp;`), a `<…>` token (date, link, mention) or a grapheme cluster (an emoji,
 * a letter with its accent), so what is left is still valid. Lengths are counted in UTF-16 units,
 * which is never less than Slack's count.
 */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const limit = max - ELLIPSIS.length;
  let safe = 0;
  let i = 0;
  while (i < limit) {
    const char = text[i];
    let end: number;
    if (char === '<') {
      const close = text.indexOf('>', i);
      end = close === -1 ? text.length : close + 1;
    } else if (char === '&') {
      const semi = text.indexOf(';', i);
      end = semi !== -1 && semi - i <= 5 ? semi + 1 : i + 1;
    } else {
      end = graphemeEnd(text, i);
    }
    if (end > limit) break;
    safe = end;
    i = end;
  }
  return `${text.slice(0, safe).trimEnd()}${ELLIPSIS}`;
}

/** Escapes `raw` and, when `max` is given, fits it. */
export function esc(raw: string, max?: number): Mrkdwn {
  const escaped = escapeText(raw);
  return trust(max === undefined ? escaped : truncate(escaped, max));
}

type Interpolation = Mrkdwn | string | number;

/** mrkdwn from a template: literal parts are trusted, interpolated strings are escaped. */
export function md(strings: TemplateStringsArray, ...values: Interpolation[]): Mrkdwn {
  // The literal parts as written, with each value between them: a loop, not String.raw with a
  // spread of the escaped values, which cost about as much as the rest of a card (issue 39).
  let text = strings[0] ?? '';
  for (let i = 0; i < values.length; i += 1) {
    const value = values[i];
    text += value instanceof Mrkdwn ? value.text : escapeText(String(value));
    text += strings[i + 1] ?? '';
  }
  return trust(text);
}

/** Joins safe pieces with a literal separator. */
export function join(pieces: readonly Mrkdwn[], separator: string): Mrkdwn {
  return trust(pieces.map((p) => p.text).join(separator));
}

/**
 * How Slack writes a date token, in each reader's own time zone and clock (docs.slack.dev, "Date
 * formatting" tokens). Slack renders the token whenever the message is shown, so none of these
 * goes stale the way "expires in 3 h" written into a message does.
 */
const DATE_FORMATS = {
  /** "today at 2:34 PM", "tomorrow at 10:00", "Nov 22, 2026 at 10:00": the day in words while near. */
  pretty: '{date_short_pretty} at {time}',
  /**
   * "Nov 22, 2026 at 10:00": a date on record, never "tomorrow": an invoice's dates, created and
   * expiry, whatever its state, so one card never mixes two forms.
   */
  fixed: '{date_short} at {time}',
  /** "3 hours ago", "2 days ago": only for instants already past, the only use Slack documents. */
  ago: '{ago}',
} as const;

type DateFormat = keyof typeof DATE_FORMATS;

/**
 * A date every reader sees in their own time zone; the fallback (what a client that cannot render
 * the token, a notification or a copy shows) is the exact instant in UTC, ISO 8601 to the second.
 */
export function slackDate(date: Date, format: DateFormat = 'pretty'): Mrkdwn {
  const seconds = Math.floor(date.getTime() / 1000);
  return trust(`<!date^${seconds}^${DATE_FORMATS[format]}|${date.toISOString().replace(/\.\d{3}Z$/, 'Z')}>`);
}

/** A mention of a Slack user; ids are checked, as they come in requests. */
export function mention(userId: string): Mrkdwn {
  return USER_ID.test(userId) ? trust(`<@${userId}>`) : esc(userId);
}

/** A link to a Slack channel; anything that is not a channel id is shown as escaped text. */
export function channelMention(channelId: string): Mrkdwn {
  return CHANNEL_ID.test(channelId) ? trust(`<#${channelId}>`) : esc(channelId);
}

/**
 * mrkdwn as words for a surface that shows text as written (Slack's error view of a side panel):
 * a channel is "this conversation", a person "someone", a date and a link their fallback label,
 * formatting marks dropped and entities back to their characters.
 */
export function plainWords(text: string): string {
  return text
    .replace(/<#\w+(?:\|[^>]*)?>/g, 'this conversation')
    .replace(/<@\w+>/g, 'someone')
    .replace(/<[^<>|]+\|([^<>]+)>/g, '$1')
    .replace(/<([^<>]+)>/g, '$1')
    .replace(/[*_~`]/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** Longest URL Slack takes in a button; also the cap for links. */
const MAX_URL_LENGTH = 3000;

/** The URL normalised, when it is http(s) and short enough to link; otherwise `undefined`. */
export function httpUrl(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  // `|` would end the link markup early; percent-encoding it keeps the same address. The URL
  // parser has already percent-encoded `<`, `>`, spaces and quotes.
  const href = url.href.replace(/\|/g, '%7C');
  return href.length <= MAX_URL_LENGTH ? href : undefined;
}

/** A link with a label when `raw` is an http(s) URL, otherwise the escaped text, never a link. */
export function link(raw: string, label: string): Mrkdwn {
  const href = httpUrl(raw);
  if (href === undefined) return esc(raw, 200);
  return trust(`<${escapeText(href)}|${escapeText(label)}>`);
}
