import { describe, expect, it } from 'vitest';
import type { StoredBalance } from '../../src/domain/balance.js';
import type { Message } from '../../src/views/blocks.js';
import { digestMessage } from '../../src/views/feed.js';
import {
  MAX_PAID_LISTED,
  PAID_HEADING,
  type PaidInvoiceItem,
  withPaidInvoices,
} from '../../src/views/paid-invoices.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';

/** The paid invoices' part of a feed post or digest, within Slack's limits whatever it is given. */

const AT = new Date('2026-11-21T12:00:00Z');

const item = (i: number, overrides: Partial<PaidInvoiceItem> = {}): PaidInvoiceItem => ({
  invoiceId: `invoice-${i}`,
  title: `Order #${i}`,
  amount: '1234567.8900001',
  currency: 'USDT',
  link: `https://pay.example.com/pay/${i}`,
  how: 'watched',
  paidAt: AT,
  ...overrides,
});

const many = (n: number, overrides: Partial<PaidInvoiceItem> = {}) =>
  Array.from({ length: n }, (_, i) => item(i + 1, overrides));

const simple: Message = {
  text: 'Received: +1 BTC',
  blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'x' } }],
};

describe('withPaidInvoices', () => {
  it('leaves a message as it is when no invoice was paid', () => {
    expect(withPaidInvoices(simple, { shown: [], total: 0 })).toEqual(simple);
  });

  it('names each with its title, exact amount grouped, currency, when and payment page; the text keeps the digits', () => {
    const message = withPaidInvoices(simple, {
      shown: [item(1), item(2, { how: 'seen', link: 'ftp://x' })],
      total: 2,
    });
    expectValidMessage(message);
    expect(visibleText(message)).toContain(
      `*${PAID_HEADING}*\n• *Order #1* — 1,234,567.8900001 USDT · paid <!date^1795262400^{date_short_pretty} at {time}|2026-11-21T12:00:00Z> · <https://pay.example.com/pay/1|payment page>\n• *Order #2* — 1,234,567.8900001 USDT · seen paid <!date^1795262400^{date_short_pretty} at {time}|2026-11-21T12:00:00Z>`,
    );
    expect(message.text).toBe(
      `Received: +1 BTC · ${PAID_HEADING}: 2 (1234567.8900001 USDT, 1234567.8900001 USDT)`,
    );
  });

  it('stays within Slack’s limits beside a digest of 60 coins, with 25 invoices of the longest titles and links', () => {
    const balances: StoredBalance = {};
    for (let i = 0; i < 60; i += 1)
      balances[`COIN${i}`.padEnd(40, 'X')] = { title: 'T'.repeat(80), balance: `-${'9'.repeat(30)}.9999999` };
    const digest = digestMessage({
      balances,
      asOf: AT,
      before: undefined,
      beforeAt: undefined,
      rises: 1,
      falls: 1,
    });
    const longest = many(MAX_PAID_LISTED, {
      title: '<'.repeat(500),
      currency: '&'.repeat(100),
      link: `https://pay.example.com/${'p'.repeat(460)}`,
    });
    const message = withPaidInvoices(digest, { shown: longest, total: 25 });
    expectValidMessage(message);
    // The 60 coins are one table in the attachments: the blocks name what fits, and count the rest.
    const text = visibleText(message);
    const named = (text.match(/^• /gm) ?? []).length;
    expect(named).toBeGreaterThan(0);
    expect(text).toContain(`and ${25 - named} more: 25 in all`);
  });

  it('counts them without naming one when no line fits the room left, the message still valid', () => {
    const nearlyFull: Message = {
      text: 'Daily balance digest',
      blocks: Array.from({ length: 4 }, (_, i) => ({
        type: 'section' as const,
        block_id: `full${i}`,
        text: { type: 'mrkdwn' as const, text: 'x'.repeat(2800) },
      })),
    };
    const longest = many(MAX_PAID_LISTED, {
      title: '<'.repeat(500),
      link: `https://pay.example.com/${'p'.repeat(460)}`,
    });
    const message = withPaidInvoices(nearlyFull, { shown: longest, total: 25 });
    expectValidMessage(message);
    expect(visibleText(message)).toContain(
      `*${PAID_HEADING}*\n25 in all, not named: this message has no room left`,
    );
  });

  it('adds no block to a message already near Slack’s size, and counts them in its text', () => {
    const full: Message = {
      text: 'Daily balance digest',
      blocks: Array.from({ length: 4 }, (_, i) => ({
        type: 'section' as const,
        block_id: `full${i}`,
        text: { type: 'mrkdwn' as const, text: 'x'.repeat(2950) },
      })),
    };
    const longest = many(MAX_PAID_LISTED, {
      title: '<'.repeat(500),
      link: `https://pay.example.com/${'p'.repeat(460)}`,
    });
    const message = withPaidInvoices(full, { shown: longest, total: 25 });
    expectValidMessage(message);
    expect(message.blocks).toEqual(full.blocks);
    expect(message.text).toBe(`Daily balance digest · ${PAID_HEADING}: 25`);
  });

  it('counts them all in the text when the message has no block left for them', () => {
    const full: Message = {
      text: 'full',
      blocks: Array.from({ length: 49 }, () => simple.blocks[0]),
    } as Message;
    const message = withPaidInvoices(full, { shown: many(3), total: 3 });
    expect(message.blocks).toHaveLength(49);
    expect(message.text).toBe(`full · ${PAID_HEADING}: 3`);
  });
});
