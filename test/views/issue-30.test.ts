import { describe, expect, it } from 'vitest';
import { SlackPostError } from '../../src/slack/calls.js';
import { digestMovedMessage, digestMovedReply } from '../../src/views/digest-time.js';
import { errorMessage, linkElsewhereMessage, unknownWordMessage } from '../../src/views/errors.js';
import { balanceHelp, invoiceHelp } from '../../src/views/help.js';
import { invoiceMessage, invoiceUnfurl } from '../../src/views/invoice.js';
import {
  alreadySharedMessage,
  paymentCheckMessage,
  placedValue,
  shareAgainMessage,
  sharedMessage,
  shareInviteFirst,
  shareUnconfirmedMessage,
} from '../../src/views/shortcut.js';
import { endReasonText, watchReplies } from '../../src/views/watch.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { INVOICE_ID, invoice, invoiceId, NOW } from '../support/factories.js';

/** The messages issue 30 (points 3 to 6) added: what a person reads, safe whatever they typed. */

const actionIds = (message: unknown) =>
  [...JSON.stringify(message).matchAll(/"action_id":"([^"]+)"/g)].map((m) => m[1]);
const HOSTILE = invoice({ title: '<!channel> & `ticks` *bold*' });
const DAILY = { digest: 'daily', weekday: 1 } as const;

describe('Watch, offered only where it can start a watch', () => {
  it('is on the card while the invoice awaits payment, and off when told it cannot start one', () => {
    expect(actionIds(invoiceMessage(invoice(), { now: NOW }))).toEqual([
      'open_payment_page',
      'refresh_invoice',
      'watch_invoice',
    ]);
    const closed = invoiceMessage(invoice(), { now: NOW, watchable: false });
    expectValidMessage(closed);
    expect(actionIds(closed)).toEqual(['open_payment_page', 'refresh_invoice']);
  });

  it('is off a paid invoice’s card and unfurl by default, the unfurl then having no buttons at all', () => {
    const paid = invoice({ status: 'closed', payStatus: 'paid' });
    expect(actionIds(invoiceMessage(paid, { now: NOW }))).not.toContain('watch_invoice');
    const unfurl = invoiceUnfurl(paid, NOW);
    expectValidMessage({ text: 'unfurl', blocks: unfurl.blocks });
    expect(unfurl.blocks.map((b) => b.type)).toEqual(['section', 'context']);
    expect(actionIds(invoiceUnfurl(invoice(), NOW, { watchable: false }))).toEqual([]);
  });

  it('is off a shortcut card the lookup says cannot start one', () => {
    const id = invoiceId(INVOICE_ID);
    const message = paymentCheckMessage([{ id, invoice: invoice(), watchable: false }], 0, {
      now: NOW,
      threadTs: '1700000000.000100',
    });
    expectValidMessage(message);
    expect(actionIds(message)).toEqual(['share_invoice:0']);
  });
});

describe('Share in thread, once', () => {
  const threadTs = '1700000000.000500';

  it('says where the card went, linked when the link is known', () => {
    const link =
      'https://home.slack.com/archives/C0SUPPORT/p1700000000000001?thread_ts=1700000000.000500&cid=C0SUPPORT';
    const shared = sharedMessage(HOSTILE, link);
    expectValidMessage(shared);
    expect(visibleText(shared)).toBe(
      ':white_check_mark: Shared *&lt;!channel&gt; &amp; `ticks` *bold** <https://home.slack.com/archives/C0SUPPORT/p1700000000000001?thread_ts=1700000000.000500&amp;cid=C0SUPPORT|in the thread>, for everyone in the conversation to see.',
    );
    expect(visibleText(sharedMessage(invoice(), undefined))).toBe(
      ':white_check_mark: Shared *Order #1042* in the thread, for everyone in the conversation to see.',
    );
    expect(actionIds(shared)).toEqual([]);
  });

  it('offers the card again after a share that posted nothing, its buttons a new try', () => {
    const again = shareAgainMessage(
      shareInviteFirst('C0SUPPORT'),
      { id: invoiceId(INVOICE_ID), invoice: HOSTILE },
      { now: NOW, threadTs, attempt: 2 },
    );
    expectValidMessage(again);
    expect(again.text).toContain('I cannot post in');
    expect(JSON.stringify(again)).toContain(`"value":"${placedValue(INVOICE_ID, threadTs, 2)}"`);
    expect(placedValue(INVOICE_ID, threadTs, 2)).toBe(`${INVOICE_ID} ${threadTs} 2`);
    expect(placedValue(INVOICE_ID, threadTs)).toBe(`${INVOICE_ID} ${threadTs}`);
    const limited = shareAgainMessage(
      errorMessage(new SlackPostError('rate_limited', 'ratelimited')),
      { id: invoiceId(INVOICE_ID), invoice: invoice() },
      { now: NOW, threadTs, attempt: 1 },
    );
    expectValidMessage(limited);
  });

  it.each([
    ['a second click', alreadySharedMessage()],
    ['no answer from Slack', shareUnconfirmedMessage(HOSTILE)],
    ['a channel closed to the bot', shareInviteFirst('C0SUPPORT')],
  ])('tells of %s in valid, safe Block Kit', (_label, message) => {
    expectValidMessage(message);
    expect(actionIds(message)).toEqual([]);
  });
});

describe('typos and links elsewhere', () => {
  it('quotes the word and what followed it safely', () => {
    const message = unknownWordMessage({
      command: '/invoice',
      word: '<!here>`',
      suggestion: 'watch',
      rest: '<@U0X> & `x`',
    });
    expectValidMessage(message);
    expect(visibleText(message)).toContain(
      "`&lt;!here&gt;'` is not a word `/invoice` knows. Did you mean `/invoice watch &lt;@U0X&gt; &amp; 'x'`?",
    );
    expect(
      visibleText(unknownWordMessage({ command: '/balance', word: 'x', suggestion: 'help', rest: '' })),
    ).toContain('Did you mean `/balance help`?');
  });

  it('names both hosts and a payment link’s shape, under PAYMENT_PAY_URL’s path', () => {
    const message = linkElsewhereMessage(
      'https://evil.example/pay/x?a=1&b=<2>',
      'evil.example',
      new URL('https://pay.example.com/app/'),
    );
    expectValidMessage(message);
    expect(visibleText(message)).toContain(
      '`https://evil.example/pay/x?a=1&amp;b=&lt;2&gt;` is a link to `evil.example`; payment links are on `pay.example.com`, like `https://pay.example.com/app/pay/&lt;id&gt;`.',
    );
  });
});

describe('a watch that ends on a final invoice, and a digest that moves', () => {
  it('says why the watch ended, and why none starts', () => {
    expect(endReasonText('final', { graceMinutes: 60, maxDays: 7 }).text).toBe(
      'it no longer awaits payment, so nothing more is expected to change',
    );
    const refused = watchReplies.final(invoice({ status: 'closed', payStatus: 'paid' }));
    expectValidMessage(refused);
    expect(visibleText(refused)).toBe(
      '*Order #1042* no longer awaits payment (Closed · Paid): there is nothing left to watch. `/invoice` shows it as it stands.',
    );
  });

  it('tells the channel and the person who moved the digest, from when to when', () => {
    const notice = digestMovedMessage({
      userId: 'U0FIN',
      digest: '08:30 Europe/Kyiv',
      was: '09:00 UTC',
      cadence: DAILY,
    });
    expectValidMessage(notice);
    expect(visibleText(notice)).toBe(
      '<@U0FIN> moved the daily balance digest of this channel to 08:30 Europe/Kyiv (it was at 09:00 UTC).',
    );
    expectValidMessage(digestMovedReply('08:30 Europe/Kyiv', '09:00 UTC', DAILY));
  });
});

describe('help, on what changed', () => {
  it('says a watch ends once its invoice no longer awaits payment, and where the digest is by default', () => {
    expect(visibleText(invoiceHelp('ephemeral'))).toContain(
      'A watch ends by itself once the invoice no longer awaits payment (paid, closed or expired) or its expiry has passed, after 7 days at most.',
    );
    expect(visibleText(balanceHelp())).toContain(
      'a digest every day at that time (default 09:00 in your own Slack time zone); where the feed is on already, it moves the digest.',
    );
  });
});
