import type { ActionsBlock } from '@slack/types';
import { describe, expect, it } from 'vitest';
import {
  ACTION_OPEN_PAYMENT_PAGE,
  ACTION_REFRESH,
  ACTION_WATCH,
  duration,
  invoiceMessage,
  invoiceUnfurl,
} from '../../src/views/invoice.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { amount, INVOICE_ID, invoice, NOW } from '../support/factories.js';

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
      '*Amount*\n`149.99` USDT',
      '*Fee*\n`1.4999` USDT · paid by the customer',
      '*Created*\n<!date^',
      '(expires in 22 h)',
      '*Shop*\nAcme Store',
      '*Sent by e-mail*\nYes',
      '*Customer is sent to*\n<https://shop.example.com/ok|after success>',
      '*Accepted methods*\nUSDT-TRC20, BTC',
      `Invoice \`${INVOICE_ID}\` · read <!date^`,
    ]) {
      expect(text).toContain(expected);
    }
    expect(message.text).toContain('Invoice "Order #1042": Open, Not paid, `149.99` USDT');
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

  it('says an invoice expiring this very moment has expired', () => {
    const at = invoice();
    expect(visibleText(invoiceMessage(at, { now: at.timeout }))).toContain('(expired)');
  });

  it('says who pays the fee either way, and whether it was e-mailed', () => {
    const text = visibleText(
      invoiceMessage(invoice({ feeByClient: false, sendToEmail: false }), { now: NOW }),
    );
    expect(text).toContain('paid by the merchant');
    expect(text).toContain('*Sent by e-mail*\nNo');
  });

  it('shows unknown status values exactly as sent', () => {
    const text = visibleText(
      invoiceMessage(invoice({ status: 'under_review', payStatus: 'partially_paid' }), { now: NOW }),
    );
    expect(text).toContain('*Status*\n`under_review`');
    expect(text).toContain('*Payment*\n`partially_paid`');
  });

  it('does not mistake inherited object keys for known statuses', () => {
    const text = visibleText(
      invoiceMessage(invoice({ status: 'constructor', payStatus: 'toString' }), { now: NOW }),
    );
    expect(text).toContain('*Status*\n`constructor`');
  });

  it('says an invoice past its timeout has expired', () => {
    const text = visibleText(
      invoiceMessage(invoice({ timeout: new Date(NOW.getTime() - 60_000) }), { now: NOW }),
    );
    expect(text).toContain('(expired)');
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
    expect(text).toContain('*Order #1042*\nOpen · Not paid · `149.99` USDT\nExpiry: <!date^');
    expect(text).toContain(`Acme Store · invoice \`${INVOICE_ID}\``);
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

describe('duration', () => {
  it.each([
    [20_000, 'less than a minute'],
    [5 * 60_000, '5 min'],
    [3 * 3_600_000, '3 h'],
    [(2 * 60 + 15) * 60_000, '2 h 15 min'],
    [-6 * 3_600_000, '6 h'],
    [72 * 3_600_000, '3 days'],
    [59_999, '1 min'],
    [29_999, 'less than a minute'],
    [59 * 60_000, '59 min'],
    [60 * 60_000, '1 h'],
    [47 * 3_600_000, '47 h'],
    [48 * 3_600_000, '2 days'],
  ])('words %i ms as %s', (ms, words) => {
    expect(duration(ms)).toBe(words);
  });
});
