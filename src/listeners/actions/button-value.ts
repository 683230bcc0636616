import { parseInvoiceId } from '../../payments/index.js';

/** A message ts as Slack writes it: digits, one dot, digits. */
const MESSAGE_TS = /^\d+\.\d+$/;
/** Which try of Share in thread a button is, after the first: 1 to 99. */
const ATTEMPT = /^[1-9]\d?$/;
/** A conversation id as Slack writes them, and a locale tag as `user_locale` gives it (`en-US`). */
const CHANNEL_ID = /^[CGD][A-Z0-9]{2,}$/;
const LOCALE = /^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8}){0,3}$/;
/** A watch id as the store makes them (`randomUUID`). */
const WATCH_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * The values the bot puts on its buttons (src/views), one reader for each. Anything else is not
 * a value the bot wrote: a stale card from an older version, or a forged click.
 */
const READERS = {
  /** Refresh: the invoice id the card shows. */
  invoice: (text: string) => parseInvoiceId(text),
  /**
   * Watch and Share in thread: the invoice id, and on the shortcut's private answer the thread it
   * is about and, once a share posted nothing, which try this is (`placedValue`:
   * `<id> <thread ts> [<try>]`).
   */
  placed: (text: string) => {
    const [id = '', threadTs, attempt, ...more] = text.split(' ');
    const invoiceId = parseInvoiceId(id);
    if (!invoiceId || more.length > 0 || (threadTs !== undefined && !MESSAGE_TS.test(threadTs)))
      return undefined;
    if (attempt !== undefined && !ATTEMPT.test(attempt)) return undefined;
    return { id: invoiceId, threadTs, attempt: attempt === undefined ? undefined : Number(attempt) };
  },
  /** Stop watching: the watch's id. */
  watch: (text: string) => (WATCH_ID.test(text) ? text : undefined),
  /** An invoice side panel's buttons: `<invoice id> <channel id or -> <locale>` (views/invoice-entity.ts `panelValue`). */
  panel: (text: string) => {
    const [id = '', channel = '', locale = '', ...more] = text.split(' ');
    const invoiceId = parseInvoiceId(id);
    if (!invoiceId || more.length > 0 || !(channel === '-' || CHANNEL_ID.test(channel))) return undefined;
    if (!LOCALE.test(locale)) return undefined;
    return { invoiceId, channelId: channel === '-' ? undefined : channel, locale };
  },
};

export type ButtonValueKind = keyof typeof READERS;
export type ButtonValue<K extends ButtonValueKind> = NonNullable<ReturnType<(typeof READERS)[K]>>;

/**
 * A button's value, read as the bot wrote it for that kind of button, or `undefined`. Bolt types
 * the value as a string, but a signed click may carry any JSON (a number, `true`, an object, an
 * array, nothing at all): this takes `unknown` and accepts only the bot's own strings.
 */
export function parseButtonValue<K extends ButtonValueKind>(
  kind: K,
  value: unknown,
): ButtonValue<K> | undefined {
  if (typeof value !== 'string') return undefined;
  return (READERS[kind](value) ?? undefined) as ButtonValue<K> | undefined;
}
