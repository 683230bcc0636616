import { describe, expect, it } from 'vitest';
import { InvalidApiKeyError } from '../../src/payments/index.js';
import { type HomeInput, homeView } from '../../src/views/home.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { balanceEntry, NOW } from '../support/factories.js';

const base: HomeInput = {
  balance: {
    kind: 'shown',
    entries: [balanceEntry('BTC', '0.5', 'Bitcoin'), balanceEntry('ETH', '0', 'Ethereum')],
    readAt: NOW,
  },
  watches: [],
  feeds: [],
  health: {
    lastSuccess: undefined,
    lastProblem: undefined,
    keyRejectedSince: undefined,
    keySource: 'configuration',
    breaker: 'closed',
  },
  outbox: { pending: 0, oldestAt: undefined },
  now: NOW,
};
const check = (input: HomeInput) => {
  const view = homeView(input);
  expect(view.type).toBe('home');
  expect(view.blocks.length).toBeLessThanOrEqual(100);
  expectValidMessage({ text: 'home', blocks: view.blocks });
  return { view, text: visibleText({ blocks: view.blocks }) };
};

describe('the App Home view', () => {
  it('shows funded currencies, counts the empty ones, and points to the commands', () => {
    const { text } = check(base);
    expect(text).toContain('*Bitcoin*\n0.5 BTC');
    expect(text).not.toContain('Ethereum');
    expect(text).toContain('and 1 more at 0');
    expect(text).toContain(
      '*Check payment status* (a message’s ⋮ menu) looks up every invoice in a message, in threads too',
    );
    expect(text).toContain('You watch no invoice.');
  });

  it('stays within 100 blocks with thousands of currencies, watches and feeds', () => {
    const { view, text } = check({
      ...base,
      balance: {
        kind: 'shown',
        entries: Array.from({ length: 3000 }, (_, i) => balanceEntry(`C${i}`, '1')),
        readAt: NOW,
      },
      watches: Array.from({ length: 500 }, (_, i) => ({
        id: `w-${i}`,
        invoiceId: `inv-${i}`,
        title: `Order ${i}`,
        status: 'open',
        payStatus: 'none',
        watcherId: 'U0A',
        startedAt: NOW,
        channelId: 'C0SUPPORT',
      })),
      feeds: Array.from({ length: 300 }, () => ({
        channelId: 'G0FIN',
        subscriberId: 'U0A',
        digest: '09:00 UTC',
        since: NOW,
      })),
    });
    expect(text).toContain('2960 more funded currencies: `/balance` lists them all');
    expect(text).toContain('485 more not shown');
    expect(text).toContain('290 more: `/balance subscriptions`');
    expect(JSON.stringify(view.blocks).match(/"action_id":"stop_watch:\d+"/g)).toHaveLength(15);
  });

  it('says what the payment service did last, and what to do about a rejected key', () => {
    const { text } = check({
      ...base,
      balance: { kind: 'failed', error: new InvalidApiKeyError({}) },
      health: {
        lastSuccess: { at: NOW, operation: 'invoice' },
        lastProblem: { at: NOW, result: 'invalid_api_key' },
        keyRejectedSince: NOW,
        keySource: 'configuration',
        breaker: 'closed',
      },
    });
    expect(text).toContain(
      'The balance could not be read just now: The payment service rejected the bot’s API key.',
    );
    expect(text).toContain(
      ':white_check_mark: Last good answer from the payment service: <!date^1795262400^',
    );
    expect(text).toContain(
      'the service rejects the bot’s API key: watches and feeds are paused until an admin fixes `PAYMENT_API_KEY`',
    );
  });

  it('tells a workspace that connected its own account to replace the key on the Home tab, not PAYMENT_API_KEY', () => {
    const rejected = { lastSuccess: undefined, lastProblem: { at: NOW, result: 'invalid_api_key' } } as const;
    const { text } = check({
      ...base,
      health: { ...rejected, keyRejectedSince: NOW, keySource: 'workspace', breaker: 'closed' },
    });
    expect(text).toContain(
      'watches and feeds are paused until whoever manages the payment account replaces the key on the app’s *Home* tab',
    );
    expect(text).not.toContain('PAYMENT_API_KEY');
    const after = check({
      ...base,
      health: { ...rejected, keyRejectedSince: undefined, keySource: 'workspace', breaker: 'closed' },
    });
    expect(after.text).toContain('the service rejected the API key: it works again once whoever manages');
    expect(after.text).not.toContain('PAYMENT_API_KEY');
  });

  it('names the last problem when the key is fine', () => {
    const { text } = check({
      ...base,
      health: {
        lastSuccess: undefined,
        lastProblem: { at: NOW, result: 'timeout' },
        keyRejectedSince: undefined,
        keySource: 'configuration',
        breaker: 'closed',
      },
    });
    expect(text).toContain('No call to the payment service has been answered since this instance started.');
    expect(text).toContain('Last problem: the service did not answer in time');
  });

  it.each(['open', 'half_open'] as const)(
    'says the service is not answering and background work is paused while the breaker is %s',
    (breaker) => {
      const { text } = check({
        ...base,
        health: {
          lastSuccess: undefined,
          lastProblem: undefined,
          keyRejectedSince: undefined,
          keySource: 'configuration',
          breaker,
        },
      });
      expect(text).toContain(
        ':red_circle: The payment service is not answering. Commands say so at once, and watches and feeds are paused',
      );
    },
  );

  it('says nothing of the breaker while it is closed', () => {
    expect(check(base).text).not.toContain('not answering');
  });

  it('says how many of the bot’s messages wait for Slack, and since when, once the oldest has waited a minute', () => {
    const waiting = (pending: number, waitedMs: number) =>
      check({ ...base, outbox: { pending, oldestAt: new Date(NOW.getTime() - waitedMs) } }).text;
    expect(waiting(3, 2 * 3_600_000)).toContain(
      ':hourglass_flowing_sand: 3 messages to Slack are waiting, the oldest since <!date^1795255200^{date_short_pretty} at {time}|2026-11-21T10:00:00Z>: Slack is failing or asks the bot to wait. They go out in order, once each, as soon as it takes them again.',
    );
    expect(waiting(1, 60_000)).toContain(':hourglass_flowing_sand: 1 message to Slack is waiting');
    expect(waiting(2, 59_999)).not.toContain('waiting');
    expect(check(base).text).not.toContain('waiting');
  });

  it('says when nothing holds funds, when a watch was not checked yet, and lists a few feeds without a "more"', () => {
    const { text } = check({
      ...base,
      balance: { kind: 'shown', entries: [balanceEntry('ETH', '0', 'Ethereum')], readAt: NOW },
      watches: [
        {
          id: 'w-1',
          invoiceId: 'inv-1',
          title: 'Order 1',
          status: undefined,
          payStatus: undefined,
          watcherId: 'U0A',
          startedAt: NOW,
          channelId: 'C0SUPPORT',
        },
      ],
      feeds: [{ channelId: 'G0FIN', subscriberId: 'U0A', digest: '09:00 UTC', since: NOW }],
    });
    expect(text).toContain('No currency holds funds yet.');
    expect(text).toContain('1 currency at 0');
    expect(text).toContain('not checked yet');
    expect(text).toContain('<#G0FIN> · digest 09:00 UTC');
    expect(text).not.toContain('more');
  });

  it('reads, top to bottom, as a person sees it', () => {
    const { view, text } = check({
      balance: {
        kind: 'shown',
        entries: [
          balanceEntry('BTC', '0.5', 'Bitcoin'),
          balanceEntry('ETH', '0', 'Ethereum'),
          balanceEntry('USDT', '12', 'Tether'),
        ],
        readAt: NOW,
      },
      watches: [
        {
          id: 'w-1',
          invoiceId: 'inv-1',
          title: 'Order 1',
          status: 'open',
          payStatus: 'partial',
          watcherId: 'U0A',
          startedAt: NOW,
          channelId: 'C0SUPPORT',
        },
        {
          id: 'w-2',
          invoiceId: 'inv-2',
          title: undefined,
          status: 'open',
          payStatus: undefined,
          watcherId: 'U0A',
          startedAt: NOW,
          channelId: 'C0SALES',
        },
      ],
      feeds: [{ channelId: 'G0FIN', subscriberId: 'U0A', digest: '09:00 UTC', since: NOW }],
      health: {
        lastSuccess: { at: NOW, operation: 'balance' },
        lastProblem: { at: NOW, result: 'timeout' },
        keyRejectedSince: undefined,
        keySource: 'configuration',
        breaker: 'closed',
      },
      outbox: { pending: 0, oldestAt: undefined },
      now: NOW,
    });
    const date = '<!date^1795262400^{date_short_pretty} at {time}|2026-11-21T12:00:00Z>';
    expect(text).toBe(
      [
        'Balance',
        '*Bitcoin*\n0.5 BTC\n*Tether*\n12 USDT',
        `Total across all projects · read ${date}\nand 1 more at 0`,
        'Your watches (2)',
        `*Order 1* in <#C0SUPPORT>\nOpen · Partial · since ${date} · as sent: payment \`partial\`\nStop`,
        `*inv-2* in <#C0SALES>\nnot checked yet · since ${date}\nStop`,
        'Payments feeds (1)',
        '<#G0FIN> · digest 09:00 UTC\nSettings',
        'Payment service',
        `:white_check_mark: Last good answer from the payment service: ${date} (balance)`,
        `Last problem: the service did not answer in time, ${date}. If it keeps happening, tell the bot’s admin.`,
        '*`/balance`* the balance, privately · `/balance subscribe` a payments feed for a private channel',
        '*`/invoice &lt;id or link&gt;`* an invoice in the channel · `/invoice watch` hear when it is paid',
        '*Check payment status* (a message’s ⋮ menu) looks up every invoice in a message, in threads too',
        `Updated ${date} · opening this tab reads everything again`,
      ].join('\n'),
    );
    const stops = view.blocks.flatMap((b) => ('accessory' in b && b.accessory ? [b.accessory] : []));
    expect(stops).toMatchObject([
      { action_id: 'stop_watch:0', value: 'w-1', text: { text: 'Stop' } },
      { action_id: 'stop_watch:1', value: 'w-2', text: { text: 'Stop' } },
      { action_id: 'feed_settings', value: 'G0FIN', text: { text: 'Settings' } },
    ]);
  });
});

describe('the App Home view, word for word where it varies', () => {
  const watch = {
    id: 'w-1',
    invoiceId: 'inv-1',
    title: 'Order 1',
    watcherId: 'U0A',
    startedAt: NOW,
    channelId: 'C0SUPPORT',
  };

  it('folds the currencies at 0 into one count, naming none of them, and says nothing when there are none', () => {
    const entries = [
      balanceEntry('BTC', '1234567.8900', 'Bitcoin'),
      balanceEntry('ETH', '0'),
      balanceEntry('LTC', '0'),
    ];
    const two = check({ ...base, balance: { kind: 'shown', entries, readAt: NOW } }).text;
    expect(two).toContain('*Bitcoin*\n1,234,567.8900 BTC');
    expect(two).toContain('and 2 more at 0');
    expect(two).not.toMatch(/\b(ETH|LTC)\b/);
    const many = Array.from({ length: 5000 }, (_, i) => balanceEntry(`<!here>${'&'.repeat(50)}${i}`, '0'));
    const { text } = check({ ...base, balance: { kind: 'shown', entries: many, readAt: NOW } });
    expect(text).toContain('No currency holds funds yet.');
    expect(text).toContain('5000 currencies at 0');
    expect(text).not.toContain('here');
    const funded = { kind: 'shown' as const, entries: [balanceEntry('BTC', '0.5', 'Bitcoin')], readAt: NOW };
    expect(check({ ...base, balance: funded }).text).not.toContain('at 0');
  });

  it('tells how to watch and how to get a feed when there is neither', () => {
    const { text } = check(base);
    expect(text).toContain(
      'You watch no invoice. `/invoice watch &lt;id or link&gt;` in a channel, or *Watch* on an invoice card.',
    );
    expect(text).toContain(
      'No channel receives the payments feed. `/balance subscribe` in a private channel turns it on.',
    );
  });

  it('calls a watch checked only once both its statuses are known', () => {
    const { text } = check({
      ...base,
      watches: [
        { ...watch, status: 'open', payStatus: undefined },
        { ...watch, id: 'w-2', status: undefined, payStatus: 'paid' },
      ],
    });
    expect(text.match(/not checked yet/g)).toHaveLength(2);
  });

  it('lists two feeds one per line, each with its Settings button', () => {
    const feed = { subscriberId: 'U0A', digest: '09:00 UTC', since: NOW };
    const { text } = check({
      ...base,
      feeds: [
        { ...feed, channelId: 'G0FIN' },
        { ...feed, channelId: 'G0OPS' },
      ],
    });
    expect(text).toContain('<#G0FIN> · digest 09:00 UTC\nSettings\n<#G0OPS> · digest 09:00 UTC\nSettings');
  });
});
