import { describe, expect, it } from 'vitest';
import { invoiceMessage, invoiceUnfurl, liveInvoiceCard } from '../../src/views/invoice.js';
import { visibleText } from '../support/block-kit.js';
import { invoice, NOW } from '../support/factories.js';

/**
 * An invoice's dates read in one form on every card, whatever its state: the absolute date and
 * time in the reader's own zone (`{date_short} at {time}`), with the exact UTC instant as the
 * fallback. Before, one card said "Created: Yesterday" next to "Expiry: Tomorrow at 5:03 AM",
 * and the same expiry turned into "Nov 30, 2026" once paid.
 */

const ON_RECORD = '{date_short} at {time}';
/** Every date token in a text: its format and its fallback. */
const tokens = (text: string) =>
  [...text.matchAll(/<!date\^(\d+)\^([^|>]+)\|([^>]+)>/g)].map((m) => ({
    seconds: Number(m[1]),
    format: m[2],
    fallback: m[3],
  }));
/** The date tokens of one field of the card ("*Created*\n…"). */
const fieldDates = (text: string, label: string) => {
  const start = text.indexOf(`*${label}*\n`);
  expect(start, label).toBeGreaterThanOrEqual(0);
  return tokens(text.slice(start, text.indexOf('\n', start + label.length + 3)));
};

const STATES = {
  'open, not paid': invoice(),
  'open, paid': invoice({ payStatus: 'paid' }),
  'closed, paid': invoice({ status: 'closed', payStatus: 'paid' }),
  'expired, not paid': invoice({ status: 'expired', timeout: new Date(NOW.getTime() - 60_000) }),
  'open, past its expiry': invoice({ timeout: new Date(NOW.getTime() - 60_000) }),
  'open, an unseen payment status': invoice({ payStatus: 'partially_paid' }),
};

describe('the dates of an invoice', () => {
  it('read in one form, created and expiry alike, whatever the status, with an exact fallback', () => {
    for (const [state, inv] of Object.entries(STATES)) {
      const text = visibleText(invoiceMessage(inv, { now: NOW }));
      const created = fieldDates(text, 'Created');
      const expiry = fieldDates(text, 'Expiry');
      expect(created, state).toEqual([
        {
          seconds: inv.createdAt.getTime() / 1000,
          format: ON_RECORD,
          fallback: inv.createdAt.toISOString().replace('.000Z', 'Z'),
        },
      ]);
      expect(expiry, state).toEqual([
        {
          seconds: inv.timeout.getTime() / 1000,
          format: ON_RECORD,
          fallback: inv.timeout.toISOString().replace('.000Z', 'Z'),
        },
      ]);
    }
  });

  it('are the same on the full card, the live card, the compact card and the notification text', () => {
    for (const [state, inv] of Object.entries(STATES)) {
      const watch = { id: 'W1', startedAt: NOW, watcherId: 'U0ABC' };
      const texts = [
        visibleText(invoiceMessage(inv, { now: NOW })),
        visibleText(liveInvoiceCard(inv, { now: NOW, watch })),
        visibleText(invoiceUnfurl(inv, NOW)),
        invoiceMessage(inv, { now: NOW }).text,
      ];
      for (const text of texts) {
        const ofInvoice = tokens(text).filter(
          (t) => t.seconds === inv.timeout.getTime() / 1000 || t.seconds === inv.createdAt.getTime() / 1000,
        );
        for (const t of ofInvoice) expect(t.format, `${state}: ${text}`).toBe(ON_RECORD);
      }
    }
  });

  it('say an unpaid open invoice past its expiry has expired, in words beside the same date', () => {
    const late = STATES['open, past its expiry'];
    const message = invoiceMessage(late, { now: NOW });
    expect(visibleText(message)).toContain(
      `*Expiry*\n<!date^${late.timeout.getTime() / 1000}^${ON_RECORD}|2026-11-21T11:59:00Z> (expired)\n`,
    );
    expect(message.text).toContain(`expired <!date^${late.timeout.getTime() / 1000}^${ON_RECORD}|`);
    // A paid invoice is never called expired because its time passed.
    const paidLate = invoice({ payStatus: 'paid', timeout: new Date(NOW.getTime() - 60_000) });
    expect(visibleText(invoiceMessage(paidLate, { now: NOW }))).not.toContain('expired');
  });
});
