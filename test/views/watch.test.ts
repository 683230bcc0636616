import { describe, expect, it } from 'vitest';
import type { Change } from '../../src/domain/watch.js';
import { liveInvoiceCard } from '../../src/views/invoice.js';
import { md } from '../../src/views/mrkdwn.js';
import {
  endReasonText,
  MAX_LISTED,
  transitionMessage,
  type WatchListItem,
  watchEndedMessage,
  watchListMessage,
  watchReplies,
} from '../../src/views/watch.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { invoice, NOW } from '../support/factories.js';

const watch = { id: 'w-1', watcherId: 'U0WATCHER', startedAt: NOW };

describe('the live card', () => {
  it('says who watches it since when, offers Stop watching, and shows the expiry as a date only', () => {
    const card = liveInvoiceCard(invoice(), { now: NOW, watch });
    expectValidMessage(card);
    const text = visibleText(card);
    expect(text).toContain(
      ':eyes: Watched since <!date^1795262400^{date_short_pretty} at {time}|2026-11-21T12:00:00Z> for <@U0WATCHER>: changes are posted in the thread',
    );
    expect(text).toContain('*Expiry*\n<!date^1795341600^{date_short} at {time}|2026-11-22T10:00:00Z>');
    expect(text).not.toContain('expires in');
    expect(JSON.stringify(card.blocks)).toContain(
      '"action_id":"stop_watch","text":{"type":"plain_text","text":"Stop watching","emoji":true},"value":"w-1"',
    );
  });

  it('once ended: says why, and offers Refresh instead of Stop', () => {
    const card = liveInvoiceCard(invoice(), {
      now: NOW,
      watch: { ...watch, ended: { at: NOW, reason: md`stopped by <@U0X>` } },
    });
    expectValidMessage(card);
    expect(visibleText(card)).toContain(
      'No longer watched since <!date^1795262400^{date_short_pretty} at {time}|2026-11-21T12:00:00Z>: stopped by <@U0X>',
    );
    expect(JSON.stringify(card.blocks)).not.toContain('stop_watch');
    expect(JSON.stringify(card.blocks)).toContain(
      '"action_id":"refresh_invoice","text":{"type":"plain_text","text":"Refresh"',
    );
  });
});

describe('the change notice', () => {
  const changes: Change[] = [
    { field: 'status', before: 'open', after: 'closed' },
    { field: 'payStatus', before: 'none', after: 'paid' },
    { field: 'amount', before: '149.99', after: '150.00' },
    { field: 'timeout', before: '2026-11-22T10:00:00.000Z', after: 'not a date' },
    { field: 'methods', before: 'BTC', after: '' },
  ];

  it('lists each change with the card’s labels, mentioning the watcher', () => {
    const message = transitionMessage(invoice(), changes, 'U0WATCHER', NOW);
    expectValidMessage(message);
    expect(visibleText(message)).toBe(
      '<@U0WATCHER> *Order #1042* changed:\n• *Status*: Open → Closed\n• *Payment*: Not paid → Paid\n• *Amount*: 149.99 USDT → 150.00 USDT\n• *Expiry*: <!date^1795341600^{date_short} at {time}|2026-11-22T10:00:00Z> → not a date\n• *Accepted methods*: BTC → none\nInvoice `5b8e1f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b` · as sent: status `open` → `closed`, payment `none` → `paid` · read <!date^1795262400^{date_short_pretty} at {time}|2026-11-21T12:00:00Z>',
    );
    expect(message.text).toBe(
      'Invoice "Order #1042" changed: *Status*: Open → Closed; *Payment*: Not paid → Paid; *Amount*: 149.99 USDT → 150.00 USDT; *Expiry*: <!date^1795341600^{date_short} at {time}|2026-11-22T10:00:00Z> → not a date; *Accepted methods*: BTC → none',
    );
  });

  it('gives no exact values when nothing but values the document has seen changed', () => {
    const message = transitionMessage(
      invoice(),
      [{ field: 'amount', before: '149.99', after: '150' }],
      'U0WATCHER',
      NOW,
    );
    expect(visibleText(message)).toMatch(/\nInvoice `[^`]+` · read <!date\^/);
  });

  it('words a value never seen from what was sent: partially_refunded reads "Partially refunded"', () => {
    const message = transitionMessage(
      invoice(),
      [{ field: 'payStatus', before: 'paid', after: 'partially_refunded' }],
      'U0WATCHER',
      NOW,
    );
    expectValidMessage(message);
    expect(visibleText(message)).toContain('• *Payment*: Paid → Partially refunded\n');
    expect(visibleText(message)).toContain('as sent: payment `paid` → `partially_refunded`');
  });

  it('escapes whatever the service sent', () => {
    const hostile = invoice({ title: '<!channel> & co', currency: '<@U1>' });
    const message = transitionMessage(
      hostile,
      [{ field: 'status', before: '<!here>', after: '&' }],
      'U0WATCHER',
      NOW,
    );
    expectValidMessage(message);
    expect(visibleText(message)).toContain(
      '*&lt;!channel&gt; &amp; co* changed:\n• *Status*: &lt;!here&gt; → &amp;\nInvoice `5b8e1f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b` · as sent: status `&lt;!here&gt;` → `&amp;`',
    );
  });
});

describe('why a watch ended', () => {
  const opts = { graceMinutes: 60, maxDays: 7 };
  it.each([
    ['stopped', { by: 'U0X' }, 'stopped by <@U0X>'],
    ['stopped', {}, 'stopped'],
    ['not_found', {}, 'the payment service no longer knows this invoice'],
    ['expired', {}, 'its expiry passed more than 60 minutes ago; this was the last check'],
    ['max_days', {}, 'it was watched for the longest a watch lasts, 7 days'],
    ['card_deleted', {}, 'its card was deleted'],
    ['not_in_channel', {}, 'the bot can no longer post in this channel'],
  ] as const)('%s reads "%s"', (reason, extra, words) => {
    expect(endReasonText(reason, { ...opts, ...extra }).text).toBe(words);
  });

  it('adds, for a watch that ended without a fresh reading, since when the invoice could not be read', () => {
    const unreadSince = new Date('2026-11-20T09:30:00Z');
    const since = '<!date^1795167000^{date_short_pretty} at {time}|2026-11-20T09:30:00Z>';
    expect(endReasonText('max_days', { ...opts, unreadSince }).text).toBe(
      `it was watched for the longest a watch lasts, 7 days; could not read the invoice since ${since}, so the card shows it as last read`,
    );
    // The last check could not read it: it is not called "the last check".
    expect(endReasonText('expired', { ...opts, unreadSince }).text).toBe(
      `its expiry passed more than 60 minutes ago; could not read the invoice since ${since}, so the card shows it as last read`,
    );
    expectValidMessage(
      watchEndedMessage(invoice(), endReasonText('expired', { ...opts, unreadSince }), 'U0W'),
    );
  });

  it('says it in the thread, mentioning the watcher', () => {
    const message = watchEndedMessage(invoice(), md`stopped`, 'U0WATCHER');
    expectValidMessage(message);
    expect(message.text).toBe('<@U0WATCHER> No longer watching *Order #1042*: stopped.');
  });
});

describe('/invoice watching', () => {
  const item = (i: number): WatchListItem => ({
    id: `w-${i}`,
    invoiceId: `inv-${i}`,
    title: i === 0 ? undefined : `Order ${i}`,
    status: i === 1 ? undefined : 'open',
    payStatus: i === 1 ? undefined : 'none',
    watcherId: 'U0WATCHER',
    startedAt: NOW,
  });

  it('says so, and how to start, when nothing is watched', () => {
    const message = watchListMessage('C0SUPPORT', []);
    expectValidMessage(message);
    expect(visibleText(message)).toBe(
      'Nothing is watched in <#C0SUPPORT>. Start with `/invoice watch &lt;id or payment link&gt;` or the *Watch* button on an invoice card.',
    );
  });

  it('lists each watch with its own Stop button, at most 20, and counts the rest', () => {
    const message = watchListMessage(
      'C0SUPPORT',
      Array.from({ length: 25 }, (_, i) => item(i)),
    );
    expectValidMessage(message);
    const stops = JSON.stringify(message.blocks).match(/"action_id":"stop_watch:\d+"/g) ?? [];
    expect(stops).toHaveLength(MAX_LISTED);
    expect(visibleText(message)).toContain('5 more not shown.');
    expect(visibleText(message)).toContain('*inv-0*\nOpen · Not paid\n`inv-0` · since <!date^');
    expect(visibleText(message)).toContain('*Order 1*\nnot checked yet');
    expect(message.text).toBe('25 invoices are watched here');
    expect(message.blocks[0]).toMatchObject({
      type: 'header',
      text: { text: 'Watched in this channel (25)' },
    });
    expect(JSON.stringify(message.blocks)).toContain(
      '"text":{"type":"plain_text","text":"Stop","emoji":true},"value":"w-0"',
    );
  });

  it('lists a paid invoice in words, with the exact values beside its id', () => {
    const message = watchListMessage('C0SUPPORT', [{ ...item(2), status: 'closed', payStatus: 'paid' }]);
    expectValidMessage(message);
    expect(visibleText(message)).toContain(
      '*Order 2*\nClosed · Paid\n`inv-2` · as sent: status `closed`, payment `paid` · since <!date^',
    );
  });

  it('says "invoice is" for one, with no count of the rest, and "not checked yet" when half the state is known', () => {
    const message = watchListMessage('C0SUPPORT', [{ ...item(2), payStatus: undefined }]);
    expectValidMessage(message);
    expect(message.text).toBe('1 invoice is watched here');
    expect(visibleText(message)).toContain('*Order 2*\nnot checked yet');
    expect(visibleText(message)).not.toContain('more not shown');
  });
});

describe('replies about watches', () => {
  it.each([
    ['started here', watchReplies.started(invoice(), false), 'its live card is in this channel'],
    ['started in a thread', watchReplies.started(invoice(), true), 'in the thread of the card you clicked'],
    [
      'already',
      watchReplies.already(invoice(), NOW),
      'is already watched in this channel, since <!date^1795262400^',
    ],
    ['the limit', watchReplies.limit(100), 'already watches 100 invoices, the most it may'],
    [
      'an expired invoice',
      watchReplies.expired(invoice({ timeout: new Date(NOW.getTime() - 7_200_000) })),
      'The expiry of *Order #1042* passed <!date^1795255200^{ago}|2026-11-21T10:00:00Z>: there is nothing left to watch.',
    ],
    [
      'not in the channel',
      watchReplies.inviteFirst('C0PRIVATE'),
      'I cannot post in <#C0PRIVATE>. Invite me first with `/invite @Crypto Payments`',
    ],
    ['stopped', watchReplies.stopped('Order #1042'), 'Stopped watching *Order #1042*.'],
    ['not watched', watchReplies.notWatched(), 'not watched in this channel'],
  ])('%s', (_label, message, phrase) => {
    expectValidMessage(message);
    expect(visibleText(message)).toContain(phrase);
  });
});

describe('stopping a watch of an invoice the bot could not read', () => {
  it('names it "the invoice"', () => {
    expect(visibleText(watchReplies.stopped(undefined))).toBe('Stopped watching *the invoice*.');
  });
});

describe('why a one-day watch ended', () => {
  it('says "1 day"', () => {
    expect(endReasonText('max_days', { graceMinutes: 60, maxDays: 1 }).text).toBe(
      'it was watched for the longest a watch lasts, 1 day',
    );
  });
});
