import type { Amount } from '../payments/index.js';
import { esc, join, type Mrkdwn, md } from './mrkdwn.js';

/**
 * Amounts as people read them in blocks, and as they copy them from the text fallback.
 *
 * Grouping is fixed (comma between thousands, dot before the fraction), not the reader's locale:
 * no payload the bot answers carries a locale, and fetching one costs a Slack call per reader
 * (docs/slack.md#amounts). It only inserts commas into the integer part of the exact digits the
 * service sent: no rounding, no JS number, every fractional digit and the sign kept, so removing
 * the commas gives the original back. The text fallback keeps the ungrouped digits (`exact`).
 */

/** The digits exactly as the service sent them (in plain notation): for the text fallback. */
const exact = (amount: Amount): string => amount.toString();

/** `1234567.8900` → `1,234,567.8900`, `-1000` → `-1,000`: commas between thousands, nothing else. */
export function groupDigits(plain: string): string {
  const sign = plain.startsWith('-') ? '-' : '';
  const body = plain.slice(sign.length);
  const dot = body.indexOf('.');
  const whole = dot === -1 ? body : body.slice(0, dot);
  const fraction = dot === -1 ? '' : body.slice(dot);
  return `${sign}${whole.replace(/\B(?=(?:\d{3})+$)/g, ',')}${fraction}`;
}

/** An amount grouped for reading in blocks. */
export const grouped = (amount: Amount): string => groupDigits(amount.toString());

/** `+0.0042`, `−1,500` (a true minus sign), `0`: a difference as a person reads it. */
export function signed(delta: Amount, figures: (amount: Amount) => string = exact): string {
  const sign = delta.sign();
  return sign > 0 ? `+${figures(delta)}` : sign < 0 ? `−${figures(delta.abs())}` : '0';
}

/** "and 5 more at 0" after listed rows, "5 currencies at 0" when none is listed. */
export function foldedZeros(count: number, afterRows: boolean): Mrkdwn {
  if (afterRows) return md`and ${count} more at 0`;
  return md`${count} ${count === 1 ? 'currency' : 'currencies'} at 0`;
}

/**
 * "0.5 BTC, 1234567.89 DOGE": amounts for a message's text fallback, exact and ungrouped, so a copy
 * from a notification or a screen reader gets the digits; stops before `maxChars` would be passed,
 * so a text cut to its limit never cuts an amount.
 */
export function exactList(items: Iterable<readonly [id: string, amount: Amount]>, maxChars: number): Mrkdwn {
  const parts: Mrkdwn[] = [];
  let chars = 0;
  for (const [id, amount] of items) {
    const part = md`${exact(amount)} ${esc(id, 40)}`;
    chars += part.text.length + 2;
    if (chars > maxChars) break;
    parts.push(part);
  }
  return join(parts, ', ');
}
