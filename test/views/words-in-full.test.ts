import { describe, expect, it } from 'vitest';
import { AccessDeniedError } from '../../src/access.js';
import { errorMessage, linkElsewhereMessage } from '../../src/views/errors.js';
import { invoiceHelp } from '../../src/views/help.js';
import { type HomeInput, homeView } from '../../src/views/home.js';
import { transitionMessage, watchListMessage, watchReplies } from '../../src/views/watch.js';
import { expectValidMessage, HOME_VIEW, visibleText } from '../support/block-kit.js';
import { balanceEntry, invoice, NOW } from '../support/factories.js';

/** Messages built inside each test, read as a whole where the words are the point. */

describe('/invoice help on watching', () => {
  it('names the commands with what they take, under the header /invoice', () => {
    const message = invoiceHelp('ephemeral');
    expectValidMessage(message);
    const lines = visibleText(message).split('\n');
    const [title, watching] = [lines[0], lines.at(-1)];
    expect(title).toBe('/invoice');
    expect(watching).toMatch(/^\*Watching\*: `\/invoice watch &lt;id or link&gt;` posts a live card/);
    expect(watching).toContain('`/invoice unwatch &lt;id or link&gt;` or *Stop watching* ends one.');
  });
});

describe('someone of another organisation', () => {
  it.each([
    [
      'change_watch',
      ':warning: *Watches are only for members of this workspace*\nStarting or stopping a watch changes what the channel is told, so it cannot be done from another organisation, for example in a shared channel.',
    ],
    [
      'change_card',
      ':warning: *Sharing and refreshing invoice cards is only for members of this workspace*\nIt changes what everyone in the channel sees, so it cannot be done from another organisation. `/invoice &lt;id&gt;` still shows you the invoice.',
    ],
  ] as const)('is told why they may not %s, and what they still may do', (what, words) => {
    const message = errorMessage(new AccessDeniedError('other_workspace', [], what));
    expectValidMessage(message);
    expect(visibleText(message)).toBe(words);
  });
});

describe('a link on another host', () => {
  it('shows a payment link’s shape with one slash before pay/, however many PAYMENT_PAY_URL ends with', () => {
    const message = linkElsewhereMessage(
      'https://x.example/pay/1',
      'x.example',
      new URL('https://pay.example.com/app//'),
    );
    expectValidMessage(message);
    expect(visibleText(message)).toContain('like `https://pay.example.com/app/pay/&lt;id&gt;`.');
  });
});

describe('watches', () => {
  it('tells that an invoice past its expiry is not watched, in full', () => {
    const message = watchReplies.expired(invoice({ timeout: new Date(NOW.getTime() - 7_200_000) }));
    expectValidMessage(message);
    const words =
      'The expiry of *Order #1042* passed <!date^1795255200^{ago}|2026-11-21T10:00:00Z>: there is nothing left to watch. `/invoice` shows it as it stands.';
    expect(message.text).toBe(words);
    expect(visibleText(message)).toBe(words);
  });

  it('lists a watch whose status is not known yet as "not checked yet", whichever half is missing', () => {
    const item = { id: 'w-1', invoiceId: 'inv-1', title: 'Order 1', watcherId: 'U0A', startedAt: NOW };
    for (const state of [
      { status: undefined, payStatus: 'none' },
      { status: 'open', payStatus: undefined },
    ]) {
      const message = watchListMessage('C0SUPPORT', [{ ...item, ...state }]);
      expectValidMessage(message);
      expect(visibleText(message)).toContain('*Order 1*\nnot checked yet\n`inv-1` · since');
    }
  });

  it('gives the exact value a status changed from when it changes back to one the document has seen', () => {
    const message = transitionMessage(
      invoice(),
      [{ field: 'status', before: 'expired', after: 'open' }],
      'U0WATCHER',
      NOW,
    );
    expectValidMessage(message);
    expect(visibleText(message)).toContain('• *Status*: Expired → Open\nInvoice `');
    expect(visibleText(message)).toContain(' · as sent: status `expired` → `open` · read <!date^');
  });
});

describe('the App Home’s balance section', () => {
  const home = (balance: HomeInput['balance']) => {
    const view = homeView({
      balance,
      watches: [],
      feeds: [],
      // A healthy bot that has read nothing yet: the fields left out are undefined.
      health: { keySource: 'configuration', breaker: 'closed' } as HomeInput['health'],
      outbox: { pending: 0, oldestAt: undefined },
      now: NOW,
    });
    expectValidMessage(view, HOME_VIEW);
    return visibleText(view);
  };

  it('counts the empty currencies in one line and names none of them', () => {
    const entries = Array.from({ length: 12 }, (_, i) => balanceEntry(`C${i}`, '0'));
    const text = home({ kind: 'shown', entries, readAt: NOW });
    expect(text).toContain('No currency holds funds yet.');
    expect(text).toContain('12 currencies at 0');
    expect(text).not.toMatch(/\bC\d+\b/);
  });

  it('names at most twenty of the channels where the balance may be read', () => {
    const allowedChannels = Array.from({ length: 25 }, (_, i) => `C${String(i).padStart(9, '0')}`);
    const text = home({ kind: 'refused', refusal: 'channel_not_allowed', allowedChannels });
    const named = allowedChannels.slice(0, 20).map((c) => `<#${c}>`);
    expect(text).toContain(`\`/balance\` in ${named.join(', ')}.`);
    expect(text).not.toContain('C000000020');
  });
});
