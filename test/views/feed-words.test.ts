import { describe, expect, it } from 'vitest';
import type { StoredBalance } from '../../src/domain/balance.js';
import {
  digestMessage,
  feedReplies,
  type SubscriptionListItem,
  subscribedMessage,
  subscriptionListMessage,
} from '../../src/views/feed.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { NOW } from '../support/factories.js';

/** Messages built inside each test: what the feed's channels and subscribers read, word for word. */

const DATE = /<!date\^\d+\^[^|>]+\|[^>]+>/.source;
const HOUR = 3_600_000;

describe('the confirmation of a new feed', () => {
  const confirmation = (pollSeconds: number, balances: StoredBalance = {}) =>
    subscribedMessage({
      channelId: 'G0FIN',
      userId: 'U0A',
      digest: '09:00 UTC',
      balances,
      readAt: NOW,
      pollSeconds,
    });

  it.each([
    [60, 'every 1 minute'],
    [120, 'every 2 minutes'],
    [90, 'every 90 seconds'],
  ])('says how often the balance is read: %i seconds is "%s"', (seconds, every) => {
    const message = confirmation(seconds);
    expectValidMessage(message);
    expect(visibleText(message)).toContain(`in <#G0FIN>: ${every} the bot reads the balance`);
  });

  it('says the account is empty, and from when the starting balance is', () => {
    const message = confirmation(60);
    expect(visibleText(message).split('\n').slice(1)).toEqual([
      'The account holds no cryptocurrency yet.',
      expect.stringMatching(new RegExp(`^Starting balance, read ${DATE}$`)),
    ]);
    const funded = confirmation(60, { BTC: { title: 'Bitcoin', balance: '0.5' } });
    expect(visibleText(funded)).toContain('*Bitcoin*\n0.5 BTC\nStarting balance, read <!date^');
    expect(visibleText(funded)).not.toContain('no cryptocurrency');
  });
});

describe('the daily digest’s notes', () => {
  const digest = (beforeAgo: number | undefined) =>
    digestMessage({
      balances: { BTC: { title: 'Bitcoin', balance: '0.5' } },
      asOf: NOW,
      before: beforeAgo === undefined ? undefined : { BTC: { title: 'Bitcoin', balance: '0.25' } },
      beforeAt: beforeAgo === undefined ? undefined : new Date(NOW.getTime() - beforeAgo),
      rises: 1,
      falls: 0,
    });
  const notes = (message: { blocks: unknown }) => visibleText(message).split('\n').slice(4);

  it('shows the balance alone, with no change, when there is no earlier reading', () => {
    const message = digest(undefined);
    expectValidMessage(message);
    expect(visibleText(message)).toMatch(
      new RegExp(
        `^Daily balance digest\nThe feed saw 1 rise and 0 falls in the last 24 hours.\n\\*Bitcoin\\*\n0.5 BTC\nBalances as of ${DATE}$`,
      ),
    );
  });

  it('says when the feed began when the earliest reading is less than 23 hours old, and not when it is a day’s', () => {
    expect(notes(digest(22 * HOUR))).toEqual([
      expect.stringMatching(new RegExp(`^Balances as of ${DATE}$`)),
      expect.stringMatching(new RegExp(`^changes since ${DATE}, when the feed began$`)),
    ]);
    for (const ago of [23 * HOUR, 24 * HOUR]) {
      expect(visibleText(digest(ago))).toContain('*Bitcoin*\n0.5 BTC · +0.25 in 24 h\nBalances as of');
      expect(notes(digest(ago))).toHaveLength(1);
    }
  });
});

describe('the list of feeds', () => {
  const feed = (i: number, digest = '09:00 Europe/Berlin'): SubscriptionListItem => ({
    channelId: `G${String(i).padStart(9, '0')}`,
    subscriberId: 'U0A',
    digest,
    since: NOW,
  });
  const LINE = new RegExp(`^<#G\\d{9}> · digest [^\\n]+ · since ${DATE} by <@U0A>$`);
  /** Each section's text, as lines. */
  const sections = (items: SubscriptionListItem[]) => {
    const message = subscriptionListMessage(items);
    expectValidMessage(message);
    return message.blocks.flatMap((b) => (b.type === 'section' && b.text ? [b.text.text.split('\n')] : []));
  };

  it('says so, and how to start one, when there is none', () => {
    const message = subscriptionListMessage([]);
    expectValidMessage(message);
    const words =
      'No channel receives the payments feed. `/balance subscribe` in a private channel turns it on there.';
    expect(message.text).toBe(words);
    expect(visibleText(message)).toBe(words);
  });

  it('counts the channels in its notification, under the header "Payments feeds"', () => {
    const one = subscriptionListMessage([feed(1)]);
    expect(one.text).toBe('1 channel receives the payments feed');
    expect(visibleText(one)).toMatch(
      new RegExp(
        `^Payments feeds\n<#G000000001> · digest 09:00 Europe/Berlin · since ${DATE} by <@U0A>\nSettings$`,
      ),
    );
    expect(subscriptionListMessage([feed(1), feed(2)]).text).toBe('2 channels receive the payments feed');
  });

  it('gives each feed its own line with the Settings button of its channel', () => {
    const message = subscriptionListMessage([feed(1), feed(2), feed(3)]);
    const lines = sections([feed(1), feed(2), feed(3)]);
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line).toEqual([expect.stringMatching(LINE)]);
    const buttons = message.blocks.flatMap((b) => (b.type === 'section' && b.accessory ? [b.accessory] : []));
    expect(buttons).toMatchObject(
      ['G000000001', 'G000000002', 'G000000003'].map((value) => ({ action_id: 'feed_settings', value })),
    );
  });

  it('lists as many feeds as Slack’s 50 blocks hold, whole, and counts the rest', () => {
    const message = subscriptionListMessage(Array.from({ length: 60 }, (_, i) => feed(i)));
    const lines = sections(Array.from({ length: 60 }, (_, i) => feed(i))).flat();
    expect(lines).toHaveLength(48);
    for (const line of lines) expect(line).toMatch(LINE);
    expect(visibleText(message)).toMatch(/12 more feeds not shown$/);
    // Lines of about half a section each stay whole.
    const base = sections([feed(0, '')])[0]?.[0]?.length ?? 0;
    for (const length of [1499, 1500, 1501]) {
      const long = sections(Array.from({ length: 4 }, (_, i) => feed(i, 'x'.repeat(length - base))));
      expect(long.flat()).toHaveLength(4);
      for (const line of long.flat()) {
        expect(line).toMatch(LINE);
        expect(line).toHaveLength(length);
      }
    }
  });
});

describe('the reply when the bot is not in the channel', () => {
  it('says how to invite it', () => {
    const message = feedReplies.inviteFirst('G0X');
    expectValidMessage(message);
    const words =
      ':warning: I cannot see or post in <#G0X>. Invite me first with `/invite @Crypto Payments`, then try again.';
    expect(message.text).toBe(words);
    expect(visibleText(message)).toBe(words);
  });
});
