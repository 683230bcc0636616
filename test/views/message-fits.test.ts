import { describe, expect, it } from 'vitest';
import type { StoredBalance } from '../../src/domain/balance.js';
import { Amount } from '../../src/payments/index.js';
import type { CoinTrend } from '../../src/views/charts.js';
import { digestMessage } from '../../src/views/feed.js';
import { HELD_IN_PERIOD, type HeldSum, withHeld } from '../../src/views/feed-settings.js';
import { PAID_HEADING, type PaidInvoiceItem, withPaidInvoices } from '../../src/views/paid-invoices.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';

/**
 * A digest at the edge of what one message holds: 60 coins, two charts, the sums held for 40
 * coins and 10 paid invoices of the longest titles and links. Whatever gives way, the message is
 * valid Block Kit and no amount is cut: every amount it shows, in its blocks or its text, is
 * whole, digit for digit.
 */

const AT = new Date('2026-11-21T09:00:00Z');
const DAY = 86_400_000;
/** Amounts of one length, each different: a cut one is shorter, so it is none of them. */
const figure = (kind: number, i: number, k = 0) =>
  `${kind}${String(i).padStart(3, '0')}${String(k).padStart(2, '0')}${'7'.repeat(24)}.${'3'.repeat(9)}`;
const exact = (text: string) => Amount.parse(text) ?? Amount.ZERO;

const COINS = 60;
const id = (i: number) => `COIN${i}`.padEnd(40, 'X');
const balances: StoredBalance = Object.fromEntries(
  Array.from({ length: COINS }, (_, i) => [id(i), { title: 'T'.repeat(80), balance: figure(1, i) }]),
);
const before: StoredBalance = Object.fromEntries(
  Array.from({ length: COINS }, (_, i) => [id(i), { title: 'T'.repeat(80), balance: figure(2, i) }]),
);
const trends: CoinTrend[] = Array.from({ length: COINS }, (_, i) => ({
  id: id(i),
  points: Array.from({ length: 8 }, (_, k) => ({
    label: `Nov ${14 + k}`,
    at: AT.getTime() - (7 - k) * DAY,
    balance: exact(figure(3 + (k % 2), i, k)),
  })),
}));
const held: HeldSum[] = Array.from({ length: 40 }, (_, i) => ({
  currency: id(i),
  sum: exact(figure(5, i)),
  count: 3,
}));
const paid: PaidInvoiceItem[] = Array.from({ length: 10 }, (_, i) => ({
  invoiceId: `invoice-${i}`,
  title: '<'.repeat(500),
  amount: figure(6, i),
  currency: '&'.repeat(100),
  link: `https://pay.example.com/${'p'.repeat(460)}`,
  how: 'watched',
  paidAt: AT,
}));

const known = new Set<string>([
  ...Object.values(balances).map((b) => b.balance),
  ...trends.flatMap((t) => t.points.map((p) => p.balance.toString())),
  ...held.map((h) => h.sum.toString()),
  ...paid.map((p) => p.amount),
]);
/** The long numbers in `text`, read without the commas that group them. */
const numbers = (text: string) => text.replace(/(\d),(?=\d{3})/g, '$1').match(/\d{20,}(?:\.\d+)?/g) ?? [];

describe('a message at the edge of Slack’s limits', () => {
  it('stays valid Block Kit with 60 coins, two charts, held sums and paid invoices, and cuts no amount', () => {
    const digest = digestMessage({
      balances,
      asOf: AT,
      before,
      beforeAt: new Date(AT.getTime() - DAY),
      rises: 60,
      falls: 0,
      trends,
    });
    const message = withPaidInvoices(withHeld(digest, held, HELD_IN_PERIOD), { shown: paid, total: 25 });
    expectValidMessage(message);
    const shown = visibleText(message);
    for (const n of [...numbers(message.text), ...numbers(shown)]) expect(known).toContain(n);
    // Nothing added to the text was cut short: what did not fit whole is not in it.
    expect(message.text).not.toMatch(/…$/);
    // The charts' figures are in the text, exact: the chart block has no text of its own.
    const charts = message.blocks.filter((b) => b.type === 'data_visualization');
    expect(charts).toHaveLength(2);
    expect(message.text).toMatch(/COIN\d+X+ over 7 days: Nov 14 \d+\.\d+, .*Nov 21 \d+\.\d+\. COIN/);
    // Each held coin is named with its whole sum, or counted with the rest.
    const named = held.filter((h) => shown.includes(`+${h.sum.toString()} ${h.currency} (3 movements)`));
    expect(named.length).toBeGreaterThan(0);
    expect(shown).toContain(`(3 movements) and ${held.length - named.length} more coins`);
    // The paid invoices: named or counted, never lost.
    expect(shown).toContain(PAID_HEADING);
    expect(shown).toMatch(/and \d+ more: 25 in all|25 in all, not named/);
  });
});
