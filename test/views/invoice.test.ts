import type { ActionsBlock } from '@slack/types';
import { describe, expect, it } from 'vitest';
import { ACTION_OPEN_PAYMENT_PAGE, ACTION_REFRESH, ACTION_WATCH } from '../../src/domain/actions.js';
import { humanise, invoiceMessage, invoiceUnfurl, liveInvoiceCard } from '../../src/views/invoice.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { amount, INVOICE_ID, invoice, NOW } from '../support/factories.js';

/** The invoice's expiry (NOW + 22 h) as a Slack date token, in the one form an invoice's dates take. */
const EXPIRY = '<!date^1795341600^{date_short} at {time}|2026-11-22T10:00:00Z>';
const A_MINUTE_AGO = '1795262340^';

const contextOf = (message: { blocks: readonly { type: string }[] }) =>
  visibleText({ blocks: message.blocks.filter((b) => b.type === 'context') });

const buttons = (message: { blocks: readonly { type: string }[] }) =>
  message.blocks.filter((b): b is ActionsBlock => b.type === 'actions').flatMap((b) => b.elements);

describe('invoiceMessage', () => {
  it('shows every field with clear labels', () => {
    const message = invoiceMessage(invoice(), { now: NOW });
    expectValidMessage(message);
    const text = visibleText(message);
    expect(message.blocks[0]).toMatchObject({
      type: 'header',
      text: { type: 'plain_text', text: 'Order #1042' },
    });
    for (const expected of [
      '*Status*\nOpen',
      '*Payment*\nNot paid',
      '*Amount*\n149.99 USDT',
      '*Fee*\n1.4999 USDT · paid by the customer',
      '*Created*\n<!date^',
      `*Expiry*\n${EXPIRY}\n`,
      '*Shop*\nAcme Store',
      '*Sent by e-mail*\nYes',
      '*Customer is sent to*\n<https://shop.example.com/ok|after success>',
      '*Accepted methods*\nUSDT-TRC20, BTC',
      `Invoice \`${INVOICE_ID}\` · read <!date^`,
    ]) {
      expect(text).toContain(expected);
    }
    expect(message.text).toBe(`Invoice "Order #1042": Open, Not paid, 149.99 USDT, expires ${EXPIRY}`);
    // The two values the document has seen read as words, with nothing more to say.
    expect(contextOf(message)).not.toContain('as sent');
    expect(text).not.toContain('expires in');
  });

  it('lists both redirects, and says when no method is listed', () => {
    const base = invoice();
    const text = visibleText(
      invoiceMessage(
        invoice({
          methods: [],
          shop: {
            ...base.shop,
            successUrl: 'https://shop.example.com/ok',
            failUrl: 'https://shop.example.com/no',
          },
        }),
        { now: NOW },
      ),
    );
    expect(text).toContain(
      '*Customer is sent to*\n<https://shop.example.com/ok|after success> · <https://shop.example.com/no|after failure>',
    );
    expect(text).toContain('*Accepted methods*\nnone listed');
    const none = visibleText(
      invoiceMessage(invoice({ shop: { ...base.shop, successUrl: null, failUrl: null } }), {
        now: NOW,
      }),
    );
    expect(none).not.toContain('Customer is sent to');
  });

  it('labels its buttons as people read them', () => {
    expect(
      buttons(invoiceMessage(invoice(), { now: NOW })).map((b) => ('text' in b ? b.text?.text : undefined)),
    ).toEqual(['Open payment page', 'Refresh', 'Watch']);
  });

  it('says an invoice expiring this very moment has expired, beside its date', () => {
    const at = invoice();
    const message = invoiceMessage(at, { now: at.timeout });
    expect(visibleText(message)).toContain(`*Expiry*\n${EXPIRY} (expired)`);
    expect(message.text).toBe(`Invoice "Order #1042": Open, Not paid, 149.99 USDT, expired ${EXPIRY}`);
  });

  it('says who pays the fee either way, and whether it was e-mailed', () => {
    const text = visibleText(
      invoiceMessage(invoice({ feeByClient: false, sendToEmail: false }), { now: NOW }),
    );
    expect(text).toContain('paid by the merchant');
    expect(text).toContain('*Sent by e-mail*\nNo');
  });

  it('words values the document has not seen from what was sent, and gives the exact values in the context line', () => {
    const message = invoiceMessage(invoice({ status: 'under_review', payStatus: 'partially_refunded' }), {
      now: NOW,
    });
    expectValidMessage(message);
    const text = visibleText(message);
    expect(text).toContain('*Status*\nUnder review');
    expect(text).toContain('*Payment*\nPartially refunded');
    expect(contextOf(message)).toContain(
      `Invoice \`${INVOICE_ID}\` · as sent: status \`under_review\`, payment \`partially_refunded\` · read <!date^`,
    );
    expect(message.text).toContain('Under review, Partially refunded, 149.99 USDT');
  });

  it('reads a paid invoice as words, with nothing counted down and nothing called expired', () => {
    const paid = invoice({ status: 'closed', payStatus: 'paid' });
    const message = invoiceMessage(paid, { now: NOW });
    expectValidMessage(message);
    const text = visibleText(message);
    expect(text).toContain('*Status*\nClosed');
    expect(text).toContain('*Payment*\nPaid');
    expect(text).toContain(`*Expiry*\n${EXPIRY}\n`);
    expect(text).not.toContain('`paid`\n');
    expect(contextOf(message)).toContain('as sent: status `closed`, payment `paid`');
    expect(message.text).toBe('Invoice "Order #1042": Closed, Paid, 149.99 USDT');
    // Paid in time, read long after its expiry: still not "expired".
    const later = invoiceMessage(paid, { now: new Date(NOW.getTime() + 48 * 3_600_000) });
    expect(visibleText(later)).not.toContain('expired');
    expect(later.text).toBe('Invoice "Order #1042": Closed, Paid, 149.99 USDT');
  });

  it('shows the expiry of an expired invoice as a date on record, its status saying the rest', () => {
    const expired = invoice({ status: 'expired', timeout: new Date(NOW.getTime() - 60_000) });
    const text = visibleText(invoiceMessage(expired, { now: NOW }));
    expect(text).toContain('*Status*\nExpired');
    expect(text).toContain(`*Expiry*\n<!date^${A_MINUTE_AGO}{date_short} at {time}|2026-11-21T11:59:00Z>\n`);
    expect(text).not.toContain('{ago}');
  });

  it('escapes a label made from what the service sent, and its exact value', () => {
    const message = invoiceMessage(invoice({ status: '<!channel>_now', payStatus: '&paid' }), { now: NOW });
    expectValidMessage(message);
    const text = visibleText(message);
    expect(text).toContain('*Status*\n&lt;!channel&gt; now');
    expect(text).toContain('*Payment*\n&amp;paid');
    expect(contextOf(message)).toContain('as sent: status `&lt;!channel&gt;_now`, payment `&amp;paid`');
  });

  it('does not mistake inherited object keys for known statuses', () => {
    const text = visibleText(
      invoiceMessage(invoice({ status: 'constructor', payStatus: 'toString' }), { now: NOW }),
    );
    expect(text).toContain('*Status*\nConstructor');
    expect(text).toContain('*Payment*\nTo string');
  });

  it('says nothing is given when a state is empty, and that it was sent empty', () => {
    const message = invoiceMessage(invoice({ payStatus: '  ' }), { now: NOW });
    expectValidMessage(message);
    expect(visibleText(message)).toContain('*Payment*\n(none given)');
    expect(contextOf(message)).toContain('as sent: payment blank');
    const empty = invoiceMessage(invoice({ payStatus: '' }), { now: NOW });
    expectValidMessage(empty);
    expect(contextOf(empty)).toContain('as sent: payment empty');
  });

  it('says an unpaid open invoice past its timeout has expired, beside its date', () => {
    const text = visibleText(
      invoiceMessage(invoice({ timeout: new Date(NOW.getTime() - 60_000) }), { now: NOW }),
    );
    expect(text).toContain(`<!date^${A_MINUTE_AGO}{date_short} at {time}|2026-11-21T11:59:00Z> (expired)`);
    expect(text).not.toContain('expires in');
  });

  it('offers the payment page and a refresh button carrying the id', () => {
    const [open, refresh] = buttons(invoiceMessage(invoice(), { now: NOW }));
    expect(open).toMatchObject({
      action_id: ACTION_OPEN_PAYMENT_PAGE,
      url: `https://pay.example.com/pay/${INVOICE_ID}`,
    });
    expect(refresh).toMatchObject({ action_id: ACTION_REFRESH, value: INVOICE_ID });
  });

  it.each([
    'javascript:alert(1)',
    'data:text/html,<script>',
    'pay.example.com/pay/x',
    `https://pay.example.com/${'x'.repeat(3000)}`,
  ])('offers no payment-page button for the link %s, only Refresh and Watch', (link) => {
    const message = invoiceMessage(invoice({ link }), { now: NOW });
    expectValidMessage(message);
    expect(buttons(message).map((b) => b.action_id)).toEqual([ACTION_REFRESH, ACTION_WATCH]);
  });

  it('names who refreshed it and when', () => {
    const text = visibleText(invoiceMessage(invoice(), { now: NOW, refreshedBy: 'U0ABC' }));
    expect(text).toMatch(/refreshed <!date\^\d+\^[^>]+> by <@U0ABC>/);
  });

  it('stays valid and escaped with hostile data from the service', () => {
    const hostile = invoice({
      title: `<!channel> ${'&<>'.repeat(2000)}`,
      status: `<!here>${'s'.repeat(5000)}`,
      payStatus: '<@U123>',
      currency: '<https://evil.example|USDT>',
      amount: amount(`${'9'.repeat(190)}.1234567`),
      methods: Array.from({ length: 1000 }, (_, i) => `<!everyone>${i}`),
      link: `javascript:alert('<x>')`,
      shop: { title: '<!subteam^S1>'.repeat(500), successUrl: 'javascript:evil()', failUrl: '<https://x|y>' },
      id: `<!channel>${'x'.repeat(5000)}`,
    });
    const message = invoiceMessage(hostile, { now: NOW });
    expectValidMessage(message);
    expect(message.blocks[0]).toMatchObject({ type: 'header' });
    const text = visibleText(message);
    expect(text).toContain('&lt;!channel&gt;');
    expect(text).toContain('javascript:evil()'); // shown as text, not linked
  });

  it('titles an untitled invoice "Invoice"', () => {
    expect(invoiceMessage(invoice({ title: '   ' }), { now: NOW }).blocks[0]).toMatchObject({
      text: { text: 'Invoice' },
    });
  });
});

describe('invoiceUnfurl', () => {
  it('is a compact card: title, status, amount, expiry and the id', () => {
    const card = invoiceUnfurl(invoice(), NOW);
    expectValidMessage(card, { requireText: false });
    const text = visibleText(card);
    expect(text).toContain(`*Order #1042*\nOpen · Not paid · 149.99 USDT\nExpiry: ${EXPIRY}\n`);
    expect(text).toMatch(new RegExp(`Acme Store · invoice \`${INVOICE_ID}\`$`));
  });

  it('of a paid invoice: in words, no expiry to meet, the exact values in its context line', () => {
    const card = invoiceUnfurl(invoice({ status: 'closed', payStatus: 'paid' }), NOW);
    expectValidMessage(card, { requireText: false });
    const text = visibleText(card);
    expect(text).toContain('*Order #1042*\nClosed · Paid · 149.99 USDT\n');
    expect(text).not.toContain('Expiry');
    expect(text).toContain(
      `Acme Store · invoice \`${INVOICE_ID}\` · as sent: status \`closed\`, payment \`paid\``,
    );
  });

  it('stays valid with hostile data', () => {
    const card = invoiceUnfurl(
      invoice({
        title: '<!channel>'.repeat(1000),
        shop: { title: '&'.repeat(9000), successUrl: null, failUrl: null },
      }),
      NOW,
    );
    expectValidMessage(card, { requireText: false });
  });
});

describe('the live card', () => {
  it('words state and expiry as the other cards do', () => {
    const watch = { id: 'w-1', watcherId: 'U0W', startedAt: NOW };
    const card = liveInvoiceCard(invoice({ status: 'closed', payStatus: 'paid' }), { now: NOW, watch });
    expectValidMessage(card);
    const text = visibleText(card);
    expect(text).toContain('*Status*\nClosed');
    expect(text).toContain('*Payment*\nPaid');
    expect(text).toContain(`*Expiry*\n${EXPIRY}\n`);
    expect(text).toContain(
      `Invoice \`${INVOICE_ID}\` · as sent: status \`closed\`, payment \`paid\`\n:eyes:`,
    );
  });
});

describe('humanise', () => {
  it.each([
    ['paid', 'Paid'],
    ['closed', 'Closed'],
    ['partially_refunded', 'Partially refunded'],
    ['PAID', 'Paid'],
    ['onHold', 'On hold'],
    ['under-review', 'Under review'],
    ['  wait__for  it ', 'Wait for it'],
    ['', ''],
    ['_', ''],
  ])('reads %j as %j', (raw, words) => {
    expect(humanise(raw)).toBe(words);
  });
});
