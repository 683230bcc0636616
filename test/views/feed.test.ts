import { describe, expect, it } from 'vitest';
import type { BalanceChange, StoredBalance } from '../../src/domain/balance.js';
import { balanceChanges } from '../../src/feed/deltas.js';
import {
  digestMessage,
  feedMessage,
  feedReplies,
  feedStoppedNotice,
  keyRejectedNotice,
  subscribedMessage,
  subscriptionListMessage,
  unsubscribedMessage,
} from '../../src/views/feed.js';
import { md } from '../../src/views/mrkdwn.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { tableRows } from '../support/block-kit-charts.js';
import { NOW } from '../support/factories.js';

const many = (n: number, digits: (i: number) => string): StoredBalance =>
  Object.fromEntries(
    Array.from({ length: n }, (_, i) => [
      `C${i}`,
      { title: `<!channel> coin ${i} & co`, balance: digits(i) },
    ]),
  );

describe('the feed message', () => {
  it('stays one valid message for 2,000 currencies moving at once, and counts what it leaves out', () => {
    const changes = balanceChanges(
      many(2000, () => '1'),
      many(2000, (i) => `${i}.0000001`),
    );
    const message = feedMessage(changes, NOW);
    expectValidMessage(message);
    const text = visibleText(message);
    expect(text).toMatch(/\d+ more changes not shown: `\/balance` shows every balance/);
    // Every change is either shown whole or counted: none is cut off silently.
    const omitted = Number(/(\d+) more changes not shown/.exec(text)?.[1]);
    expect(text.match(/ — balance /g)?.length).toBe(2000 - omitted);
    expect(message.blocks.filter((b) => b.type === 'section').length).toBeGreaterThan(1);
    expect(visibleText(message)).toContain(
      '*&lt;!channel&gt; coin 1 &amp; co*: received *+0.0000001* C1 — balance 1.0000001 C1',
    );
  });

  it('sums up rises in its notification text', () => {
    const changes = balanceChanges(
      { BTC: { title: 'BTC', balance: '1' } },
      { BTC: { title: 'BTC', balance: '1.5' } },
    );
    expect(feedMessage(changes, NOW).text).toBe('Received: +0.5 BTC');
    expect(visibleText(feedMessage(changes, NOW))).toContain('*BTC*: received *+0.5* BTC — balance 1.5 BTC');
  });

  it('shows what arrived, however small, as exact text in bold, never as red code; what left says so', () => {
    const changes = balanceChanges(
      {
        LTC: { title: 'Litecoin', balance: '0' },
        'USDT-TRC20': { title: 'Tether (TRC-20)', balance: '1520.5' },
      },
      {
        LTC: { title: 'Litecoin', balance: '0.0000001' },
        'USDT-TRC20': { title: 'Tether (TRC-20)', balance: '20.5' },
      },
    );
    const text = visibleText(feedMessage(changes, NOW));
    expect(text).toContain('*Litecoin*: received *+0.0000001* LTC — balance 0.0000001 LTC');
    // The id follows every amount: the name does not repeat it in parentheses.
    expect(text).toContain(
      '*Tether (TRC-20)*: *−1,500* USDT-TRC20 withdrawn or moved — balance 20.5 USDT-TRC20',
    );
    expect(text).not.toContain('(USDT-TRC20)');
    expect(text).not.toMatch(/`[+−]?\d/);
  });

  it('names at most twenty rises in its notification text, comma-separated', () => {
    const before = Object.fromEntries(
      Array.from({ length: 25 }, (_, i) => [`C${i}`, { title: `C${i}`, balance: '1' }]),
    );
    const after = Object.fromEntries(
      Array.from({ length: 25 }, (_, i) => [`C${i}`, { title: `C${i}`, balance: '2' }]),
    );
    const text = feedMessage(balanceChanges(before, after), NOW).text;
    expect(text.startsWith('Received: +1 C0, +1 C1, +1 C2')).toBe(true);
    expect(text.split(', ')).toHaveLength(20);
    expect(text.endsWith('+1 C19 and 5 more')).toBe(true);
  });

  it('ends its notification text between two rises, never inside an amount, when twenty are too long', () => {
    const huge = (i: number) => `${100 + i}${'9'.repeat(190)}.5`;
    const before = Object.fromEntries(
      Array.from({ length: 20 }, (_, i) => [`C${i}`.padEnd(40, 'X'), { title: '', balance: '0' }]),
    );
    const after = Object.fromEntries(
      Array.from({ length: 20 }, (_, i) => [`C${i}`.padEnd(40, 'X'), { title: '', balance: huge(i) }]),
    );
    const text = feedMessage(balanceChanges(before, after), NOW).text;
    const listed = text
      .slice('Received: '.length)
      .replace(/ and \d+ more$/, '')
      .split(', ');
    expect(listed.length).toBeLessThan(20);
    for (const [i, part] of listed.entries()) expect(part).toBe(`+${huge(i)} ${`C${i}`.padEnd(40, 'X')}`);
    expect(text).toMatch(new RegExp(` and ${20 - listed.length} more$`));
  });

  it('names a currency by its id alone when its title is blank or the id itself', () => {
    const changes = balanceChanges(
      { BTC: { title: '  ', balance: '1' }, ETH: { title: 'ETH', balance: '1' } },
      { BTC: { title: '  ', balance: '2' }, ETH: { title: 'ETH', balance: '2' } },
    );
    const text = visibleText(feedMessage(changes, NOW));
    expect(text).toContain('*BTC*: received *+1* BTC');
    expect(text).toContain('*ETH*: received *+1* ETH');
  });

  it('says between which readings a change seen across a gap happened, in dates each reader sees in their zone', () => {
    const changes = balanceChanges(
      { BTC: { title: 'BTC', balance: '1' } },
      { BTC: { title: 'BTC', balance: '2' } },
    );
    const message = feedMessage(changes, NOW, new Date(NOW.getTime() - 3 * 86_400_000));
    expectValidMessage(message);
    expect(visibleText(message)).toMatch(
      /· changed between <!date\^\d+\^\{date_short_pretty\} at \{time\}\|[^>]+> and <!date\^\d+\^[^>]+>: the balance could not be read in between, so this is the net change over that time$/,
    );
    expect(visibleText(feedMessage(changes, NOW))).not.toContain('between');
  });

  it('says "currency" for one', () => {
    const change: BalanceChange[] = balanceChanges({ X: { title: 'X', balance: '2' } }, {});
    expect(feedMessage(change, NOW).text).toBe('Balance changed in 1 currency');
  });
});

describe('the digest', () => {
  const base = { asOf: NOW, rises: 1, falls: 2, before: undefined, beforeAt: undefined };

  it('stays one valid message for 2,000 currencies, listed in one table', () => {
    const message = digestMessage({
      ...base,
      balances: many(2000, (i) => `${i}.5`),
      before: many(2000, () => '0'),
      beforeAt: new Date(NOW.getTime() - 86_400_000),
    });
    expectValidMessage(message);
    expect(visibleText(message)).toContain('1901 more currencies not shown');
    expect(tableRows(message).slice(0, 3)).toEqual([
      ['Coin', 'Balance', 'Change in 24 h'],
      ['C0', '0.5', '+0.5'],
      ['C1', '1.5', '+1.5'],
    ]);
    expect(tableRows(message)).toHaveLength(100);
    expect(tableRows(message).at(-1)).toEqual(['C98', '98.5', '+98.5']);
  });

  it('words its counts and its lateness', () => {
    const message = digestMessage({ ...base, balances: {}, rises: 1, falls: 1, lateByMs: 90 * 60_000 });
    expectValidMessage(message);
    expect(message.text).toBe(
      'Daily balance digest (late): The feed saw 1 rise and 1 fall in the last 24 hours.',
    );
    expect(visibleText(message)).toContain('The account holds no cryptocurrency yet.');
    expect(visibleText(message)).toContain('sent 90 min late: the bot was not running at digest time');
  });
});

describe('other feed messages', () => {
  it.each([
    [
      'the confirmation',
      subscribedMessage({
        channelId: 'G0FIN',
        userId: 'U0A',
        digest: '09:00 UTC',
        balances: many(3, () => '1'),
        readAt: NOW,
        pollSeconds: 90,
      }),
      'every 90 seconds',
    ],
    [
      'the confirmation of an empty account',
      subscribedMessage({
        channelId: 'G0FIN',
        userId: 'U0A',
        digest: '09:00 UTC',
        balances: {},
        readAt: NOW,
        pollSeconds: 120,
      }),
      'every 2 minutes',
    ],
    ['the stop notice', unsubscribedMessage('U0A'), '<@U0A> turned off the payments feed in this channel.'],
    ['the key notice', keyRejectedNotice('configuration'), 'once an admin fixes `PAYMENT_API_KEY`'],
    [
      'the key notice of a connected account',
      keyRejectedNotice('workspace'),
      'resumes by itself once whoever manages the payment account replaces the key on the app’s *Home* tab',
    ],
    [
      'the stopped feed',
      feedStoppedNotice('G0FIN', md`the channel is no longer private`),
      'has stopped: the channel is no longer private',
    ],
    ['no feeds', subscriptionListMessage([]), 'No channel receives the payments feed.'],
    [
      'the feeds',
      subscriptionListMessage([{ channelId: 'G0FIN', subscriberId: 'U0A', digest: '09:00 UTC', since: NOW }]),
      '<#G0FIN> · digest 09:00 UTC · since',
    ],
    [
      'subscribed',
      feedReplies.subscribed('08:30 Europe/Berlin'),
      'with a digest every day at 08:30 Europe/Berlin',
    ],
    [
      'already',
      feedReplies.already('09:00 UTC', { digest: 'daily', weekday: 1 }, NOW),
      'already receives the payments feed',
    ],
    ['a bad time', feedReplies.badTime('25:00 <!here>'), '`25:00 &lt;!here&gt;` is not a time and time zone'],
    ['not subscribed', feedReplies.notSubscribed(), 'does not receive the payments feed'],
    ['unsubscribed', feedReplies.unsubscribed(), 'The payments feed is off in this channel.'],
    ['invite first', feedReplies.inviteFirst('G0X'), 'I cannot see or post in <#G0X>'],
  ])('%s is valid and says so', (_label, message, phrase) => {
    expectValidMessage(message);
    expect(visibleText(message)).toContain(phrase);
  });
});

const digestBase = { asOf: NOW, rises: 0, falls: 0, before: undefined, beforeAt: undefined };

/** The fewest items `build` cannot show whole: the message that leaves exactly one out. */
function leavingOneOut<T>(build: (n: number) => T, omits: (built: T) => boolean): T {
  let [lo, hi] = [1, 4000];
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (omits(build(mid))) hi = mid;
    else lo = mid + 1;
  }
  return build(lo);
}

describe('what a long message leaves out, in the singular and the plural', () => {
  const notShown = (m: { blocks: unknown }) => /not shown/.test(visibleText(m));
  const list = (n: number) =>
    subscriptionListMessage(
      Array.from({ length: n }, (_, i) => ({
        channelId: `G${String(i).padStart(9, '0')}`,
        subscriberId: 'U0A',
        digest: '09:00 Europe/Berlin',
        since: NOW,
      })),
    );
  const confirmation = (n: number) =>
    subscribedMessage({
      channelId: 'G0FIN',
      userId: 'U0A',
      digest: '09:00 UTC',
      balances: many(n, (i) => `${i}.25`),
      readAt: NOW,
      pollSeconds: 60,
    });

  it('the feed message: "1 more change"', () => {
    const one = leavingOneOut(
      (n) =>
        feedMessage(
          balanceChanges(
            many(n, () => '1'),
            many(n, () => '2'),
          ),
          NOW,
        ),
      notShown,
    );
    expect(visibleText(one)).toContain('\n1 more change not shown: `/balance` shows every balance');
  });

  it('the digest: "1 more currency"', () => {
    const one = leavingOneOut(
      (n) => digestMessage({ ...digestBase, balances: many(n, () => '1') }),
      notShown,
    );
    expect(visibleText(one)).toMatch(/\n1 more currency not shown$/);
  });

  it('the confirmation: "1 more currency", "N more currencies"', () => {
    const one = leavingOneOut(confirmation, notShown);
    expectValidMessage(one);
    expect(visibleText(one)).toMatch(/\n1 more currency not shown$/);
    expect(visibleText(confirmation(2000))).toMatch(/\n\d+ more currencies not shown$/);
  });

  it('the list of feeds: "1 more feed", "N more feeds"', () => {
    const one = leavingOneOut(list, notShown);
    expectValidMessage(one);
    expect(visibleText(one)).toMatch(/\n1 more feed not shown$/);
    const all = list(3000);
    expectValidMessage(all);
    expect(visibleText(all)).toMatch(/\n\d+ more feeds not shown$/);
  });
});

describe('the digest of a currency that is new since yesterday', () => {
  it('counts its whole balance as the change', () => {
    const message = digestMessage({
      ...digestBase,
      balances: { BTC: { title: 'Bitcoin', balance: '0.5' }, ETH: { title: 'Ether', balance: '2' } },
      before: { BTC: { title: 'Bitcoin', balance: '0.25' } },
      beforeAt: new Date(NOW.getTime() - 86_400_000),
    });
    expect(visibleText(message)).toContain('*Bitcoin*\n0.5 BTC · +0.25 in 24 h');
    expect(visibleText(message)).toContain('*Ether*\n2 ETH · +2 in 24 h');
  });
});
