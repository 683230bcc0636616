import { beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_DIGEST } from '../../src/feed/schedule.js';
import { num } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import { HOME_TEAM } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { type RecordingPoster, recordingPoster } from '../support/fake-slack.js';
import { useSandbox } from '../support/use-sandbox.js';
import { feedInstance } from './feed-instance.js';

/**
 * The feed across time without readings: a balance that has not moved for longer than the
 * history is kept, the bot or the payment service down for days, a rejected key. A payment is
 * never taken for the starting point; a change seen across a gap says the span it happened in.
 */

const env = useSandbox();
const FINANCE = 'G0FINANCE';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const T0 = Date.parse('2026-11-21T08:00:00Z');
const BTC = (balance: string) => ({ id: 'BTC', title: 'Bitcoin', balance: num(balance) });

let clock: { now: number };
let poster: RecordingPoster;
beforeEach(async () => {
  clock = { now: T0 };
  poster = recordingPoster();
  poster.conversations.set(FINANCE, { isPrivate: true, isDirect: false, isShared: false });
  await emptyWork(env.store);
  env.sandbox.reset();
  env.sandbox.setBalances([BTC('0.0012')]);
});

/** A feed turned on in FINANCE at T0, read every `pollSeconds`. */
async function subscribed(pollSeconds = 60) {
  const bot = feedInstance(env, 'a', poster, clock, {}, { pollSeconds });
  await bot.feed.subscribe({
    teamId: HOME_TEAM,
    channelId: FINANCE,
    userId: 'U0FIN',
    digest: DEFAULT_DIGEST,
  });
  return bot;
}
/** What the feed said in the channel after turning on, digests aside. */
const feedPosts = () =>
  poster
    .repliesIn(FINANCE)
    .slice(1)
    .filter((m) => !m.text.startsWith('Daily'))
    .map((m) => visibleText(m));
const digests = () => poster.repliesIn(FINANCE).filter((m) => m.text.startsWith('Daily'));
const readingsTaken = async () =>
  (await env.store.db.selectFrom('balance_history').select('taken_at').orderBy('taken_at').execute()).map(
    (r) => r.taken_at,
  );

describe('a balance that has not moved for longer than the history is kept', () => {
  it('still announces the payment that moves it, and counts it in the digest', async () => {
    const { tick } = await subscribed(3600);
    // Read every hour for eight days: the balance never moves, so the one reading stored is the
    // starting one, eight days old by the end.
    for (clock.now = T0 + HOUR; clock.now <= T0 + 8 * DAY; clock.now += HOUR) await tick();
    expect(feedPosts()).toEqual([]);
    // The next reading is the first after which the starting one is older than the history kept.
    env.sandbox.setBalances([BTC('0.5012')]);
    expect(clock.now).toBe(Date.parse('2026-11-29T09:00:00Z'));
    await tick();
    expect(feedPosts()).toEqual([
      '*Bitcoin*: received *+0.5* BTC — balance 0.5012 BTC\n' +
        ':moneybag: Payments feed · read <!date^1795942800^{date_short_pretty} at {time}|2026-11-29T09:00:00Z>',
    ]);
    // That tick's digest (09:00 UTC) came after the reading; its chart draws the week from the
    // one reading kept all along.
    expect(digests().at(-1)?.text).toBe(
      'Daily balance digest: The feed saw 1 rise and 0 falls in the last 24 hours. ' +
        'BTC over 7 days: Nov 22 0.0012, Nov 23 0.0012, Nov 24 0.0012, Nov 25 0.0012, Nov 26 0.0012, Nov 27 0.0012, Nov 28 0.0012, Nov 29 0.5012. ' +
        'Balances: 0.5012 BTC',
    );
  }, 30_000);
});

describe('a change seen across a gap', () => {
  it('after an outage across the eight-day mark: posted, saying between which readings it happened', async () => {
    const { tick } = await subscribed();
    env.sandbox.setBalances([BTC('0.0020')]);
    clock.now = T0 + MINUTE;
    await tick();
    // The bot is down for nine days; a payment arrives meanwhile.
    env.sandbox.setBalances([BTC('1.0020')]);
    clock.now = T0 + 9 * DAY + MINUTE;
    await tick();
    expect(feedPosts()[1]).toBe(
      '*Bitcoin*: received *+1* BTC — balance 1.0020 BTC\n' +
        ':moneybag: Payments feed · changed between <!date^1795248060^{date_short_pretty} at {time}|2026-11-21T08:01:00Z> and <!date^1796025660^{date_short_pretty} at {time}|2026-11-30T08:01:00Z>: the balance could not be read in between, so this is the net change over that time',
    );
    // The history is still pruned: the starting reading went, the newest before the outage stayed.
    expect(await readingsTaken()).toEqual([T0 + MINUTE, T0 + 9 * DAY + MINUTE]);
  });

  it('spans from the last successful read, which may be later than the last stored reading', async () => {
    const { tick } = await subscribed();
    for (clock.now = T0 + MINUTE; clock.now <= T0 + 30 * MINUTE; clock.now += MINUTE) await tick();
    env.sandbox.setBalances([BTC('0.0013')]);
    clock.now = T0 + 40 * MINUTE; // nine readings missed
    await tick();
    expect(feedPosts()[0]).toContain(
      'changed between <!date^1795249800^{date_short_pretty} at {time}|2026-11-21T08:30:00Z> and <!date^1795250400^{date_short_pretty} at {time}|2026-11-21T08:40:00Z>',
    );
  });

  it('is not said for a reading or two missed, only beyond three poll intervals', async () => {
    const { tick } = await subscribed();
    clock.now = T0 + MINUTE;
    await tick();
    env.sandbox.setBalances([BTC('0.0013')]);
    clock.now = T0 + 4 * MINUTE; // three intervals since the last read: two readings missed
    await tick();
    env.sandbox.setBalances([BTC('0.0014')]);
    clock.now = T0 + 7 * MINUTE + 1;
    await tick();
    const [plain, across] = feedPosts();
    expect(plain).toContain(':moneybag: Payments feed · read <!date^1795248240^');
    expect(across).toContain(
      'changed between <!date^1795248240^{date_short_pretty} at {time}|2026-11-21T08:04:00Z> and',
    );
  });

  it('after a rejected key: the first reading once it works says since when the balance was not read', async () => {
    const { tick } = await subscribed();
    clock.now = T0 + MINUTE;
    await tick();
    env.sandbox.failNext({ kind: 'status', status: 401, body: '{}' }, 10);
    for (let i = 0; i < 10; i += 1) {
      clock.now += MINUTE;
      await tick();
    }
    env.sandbox.setBalances([BTC('0.0112')]);
    clock.now += MINUTE;
    await tick();
    const [notice, change] = feedPosts();
    expect(notice).toContain('rejects the bot’s API key');
    expect(change).toContain('received *+0.01* BTC');
    expect(change).toContain(
      'changed between <!date^1795248060^{date_short_pretty} at {time}|2026-11-21T08:01:00Z> and <!date^1795248720^{date_short_pretty} at {time}|2026-11-21T08:12:00Z>',
    );
  });
});
