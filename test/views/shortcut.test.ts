import { describe, expect, it } from 'vitest';
import { InvoiceNotFoundError } from '../../src/payments/index.js';
import { paymentCheckMessage } from '../../src/views/shortcut.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { INVOICE_ID, invoice, invoiceId, NOW } from '../support/factories.js';

const opts = { now: NOW, threadTs: '1700000000.000100' };

describe('the shortcut’s answer', () => {
  it('counts the invoices it did not look up, one or many', () => {
    const lookups = [{ id: invoiceId(INVOICE_ID), invoice: invoice() }];
    const one = paymentCheckMessage(lookups, 1, opts);
    expectValidMessage(one);
    expect(visibleText(one)).toContain('1 more invoice in the message not shown: I look up 10 at most.');
    expect(visibleText(paymentCheckMessage(lookups, 3, opts))).toContain(
      '3 more invoices in the message not shown',
    );
    expect(visibleText(paymentCheckMessage(lookups, 0, opts))).not.toContain('not shown');
    expect(one.text).toBe('Found 1 invoice in the message; 1 read');
  });

  it('shows a lookup that failed as a line of its own', () => {
    const id = invoiceId(INVOICE_ID);
    const message = paymentCheckMessage(
      [
        { id, error: new InvoiceNotFoundError(id, { status: 400 }) },
        { id, invoice: invoice() },
      ],
      0,
      opts,
    );
    expectValidMessage(message);
    expect(message.text).toBe('Found 2 invoices in the message; 1 read');
    expect(visibleText(message)).toContain(`:warning: \`${INVOICE_ID}\`: `);
  });
});

describe('the shortcut’s answer, as the person reads it', () => {
  it('says it is private, and labels each card’s two buttons', () => {
    const message = paymentCheckMessage([{ id: invoiceId(INVOICE_ID), invoice: invoice() }], 0, opts);
    expect(visibleText(message)).toContain(
      'Only you see this. *Share in thread* posts the full card where everyone in the conversation sees it.',
    );
    const buttons = message.blocks.flatMap((b) =>
      b.type === 'actions'
        ? b.elements.map((e) => ('text' in e && e.text ? `${e.action_id} ${e.text.text}` : ''))
        : [],
    );
    expect(buttons).toEqual(['share_invoice:0 Share in thread', 'watch_invoice:0 Watch']);
  });
});

describe('the shortcut’s cards, worded by state', () => {
  it('reads an open invoice with its expiry, a paid one in words with no expiry and its exact values', () => {
    const id = invoiceId(INVOICE_ID);
    const message = paymentCheckMessage(
      [
        { id, invoice: invoice() },
        { id, invoice: invoice({ title: 'Paid one', status: 'closed', payStatus: 'paid' }) },
      ],
      0,
      opts,
    );
    expectValidMessage(message);
    const text = visibleText(message);
    expect(text).toContain(
      '*Order #1042*\nOpen · Not paid · 149.99 USDT\nExpiry: <!date^1795341600^{date_short} at {time}|2026-11-22T10:00:00Z>\n',
    );
    expect(text).toContain('*Paid one*\nClosed · Paid · 149.99 USDT\nShare in thread\n');
    expect(text).toContain(`\nInvoice \`${INVOICE_ID}\` · as sent: status \`closed\`, payment \`paid\`\n`);
    expect(text).not.toContain('expires in');
  });

  it('stays valid with ten invoices in states never seen, each with its context line', () => {
    const id = invoiceId(INVOICE_ID);
    const lookups = Array.from({ length: 10 }, (_, i) => ({
      id,
      invoice: invoice({ status: `<!here>${'x'.repeat(3000)}${i}`, payStatus: 'partially_refunded' }),
    }));
    const message = paymentCheckMessage(lookups, 5, opts);
    expectValidMessage(message);
    expect(visibleText(message).match(/Partially refunded/g)).toHaveLength(10);
  });
});
