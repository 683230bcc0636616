import { describe, expect, it } from 'vitest';
import { slackDate } from '../../src/views/mrkdwn.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import type { PostedMessage } from '../support/fake-slack.js';
import { clock, useFeedService } from './feed-service-setup.js';
import { tuned } from './tuned-feed.js';

/**
 * Issue 40, "a digest finance can reconcile": consecutive digests tile time. Each rise and fall,
 * each held movement and the balance's change is in one digest, whether one went out late, was
 * skipped, was turned off and on again or became weekly; the digest says where it starts when that
 * is not the usual day or week before.
 */

useFeedService();

const at = (iso: string) => Date.parse(iso);
const HELD_ONE = 'Held below this channel’s minimums in this period: +0.001 BTC (1 movement)';
/** The held sums a digest's text ends with. */
const heldLine = (m: PostedMessage | undefined) => m?.text.slice(m.text.indexOf('Held below'));
/** The note of a digest that follows the last one sent, whose balances were as of `asOf`. */
const sinceLast = (asOf: string) => `changes since ${slackDate(new Date(at(asOf))).text}, the last digest`;

/** A feed holding BTC movements below 0.01, its first digest sent on time at 09:00 UTC on 21 November. */
async function afterFirstDigest() {
  const feed = await tuned({ feed_minimums: 'BTC 0.01' });
  clock.now = at('2026-11-21T09:00:00Z');
  await feed.bot.tick();
  const digests = (): PostedMessage[] => {
    const sent = feed.posts().filter((p) => /^(Daily|Weekly) balance digest/.test(p.text));
    for (const d of sent) expectValidMessage(d);
    return sent;
  };
  expect(digests()).toHaveLength(1);
  return { ...feed, digests };
}

describe('consecutive digests', () => {
  it('a late digest names what moved since the last one, and the next one on time names none of it again', async () => {
    const feed = await afterFirstDigest();
    // The bot was down from the 21st until 20:00 on the 22nd: the digest due at 09:00 goes out
    // 11 hours late, after the reading that finds +0.001 BTC (held below the minimum).
    clock.now = at('2026-11-22T20:00:00Z');
    await feed.balances('0.0022');
    clock.now = at('2026-11-23T09:00:00Z');
    await feed.bot.tick();
    const [, late, next] = feed.digests();
    expect(late?.text).toMatch(/^Daily balance digest \(late\): The feed saw 1 rise and 0 falls/);
    expect(late?.text).toContain('The feed saw 1 rise and 0 falls since the last digest.');
    expect(heldLine(late)).toBe(HELD_ONE);
    expect(visibleText(late)).toContain('0.0022 BTC · +0.001 since the last digest');
    expect(visibleText(late)).toContain(sinceLast('2026-11-21T09:00:00Z'));
    expect(next?.text).toMatch(/^Daily balance digest: The feed saw 0 rises and 0 falls/);
    expect(next?.text).not.toContain('Held below');
    expect(visibleText(next)).not.toContain('in 24 h');
    expect(visibleText(next)).toContain(sinceLast('2026-11-22T20:01:00Z'));
  });

  it('names the held sums and the rises of a digest skipped 12 hours late in the next one sent', async () => {
    const feed = await afterFirstDigest();
    clock.now = at('2026-11-21T12:00:00Z');
    await feed.balances('0.0022');
    clock.now = at('2026-11-22T21:00:00Z');
    await feed.bot.tick();
    expect(feed.digests()).toHaveLength(1);
    clock.now = at('2026-11-23T09:00:00Z');
    await feed.bot.tick();
    const [, next] = feed.digests();
    expect(next?.text).toMatch(/^Daily balance digest: The feed saw 1 rise and 0 falls/);
    expect(heldLine(next)).toBe(HELD_ONE);
    expect(visibleText(next)).toContain('0.0022 BTC · +0.001 since the last digest');
    expect(visibleText(next)).toContain(sinceLast('2026-11-21T09:00:00Z'));
  });

  it('tile across a switch from daily to weekly: the first weekly one starts where the last daily one stopped', async () => {
    const feed = await tuned({ feed_minimums: 'BTC 0.01' });
    clock.now = at('2026-11-21T08:30:00Z');
    await feed.balances('0.0022'); // in the first digest
    clock.now = at('2026-11-21T09:00:00Z');
    await feed.bot.tick();
    clock.now = at('2026-11-21T12:00:00Z');
    await feed.balances('0.0032');
    // Wednesdays at 10:00 in Berlin: 09:00 UTC on the 25th.
    await feed.save({
      feed_digest: 'weekly',
      feed_weekday: '3',
      feed_digest_time: '10:00',
      feed_zone: 'Europe/Berlin',
    });
    clock.now = at('2026-11-25T09:00:00Z');
    await feed.bot.tick();
    const digests = feed.posts().filter((p) => /balance digest/.test(p.text));
    expect(digests.map((d) => d.text.split(':')[0])).toEqual([
      'Daily balance digest',
      'Weekly balance digest',
    ]);
    const [daily, weekly] = digests;
    expect(daily?.text).toMatch(/^Daily balance digest: The feed saw 1 rise and 0 falls/);
    expect(heldLine(daily)).toBe(HELD_ONE);
    expect(weekly?.text).toMatch(/^Weekly balance digest: The feed saw 1 rise and 0 falls/);
    expect(heldLine(weekly)).toBe(HELD_ONE);
    expect(visibleText(weekly)).toContain('0.0032 BTC · +0.001 since the last digest');
    expect(visibleText(weekly)).toContain(sinceLast('2026-11-21T09:00:00Z'));
  });

  it('start where the last one sent stopped when the digest is turned off and on again', async () => {
    const feed = await afterFirstDigest();
    clock.now = at('2026-11-21T10:00:00Z');
    await feed.save({ feed_digest: 'off' });
    clock.now = at('2026-11-22T12:00:00Z');
    await feed.balances('0.0022');
    clock.now = at('2026-11-23T12:00:00Z');
    await feed.save({ feed_digest: 'daily', feed_digest_time: '13:30' });
    clock.now = at('2026-11-23T13:30:00Z');
    await feed.bot.tick();
    clock.now = at('2026-11-24T13:30:00Z');
    await feed.bot.tick();
    const [, on, after] = feed.digests();
    expect(on?.text).toMatch(/^Daily balance digest: The feed saw 1 rise and 0 falls/);
    expect(heldLine(on)).toBe(HELD_ONE);
    expect(visibleText(on)).toContain('0.0022 BTC · +0.001 since the last digest');
    expect(visibleText(on)).toContain(sinceLast('2026-11-21T09:00:00Z'));
    // The day after, on time: nothing again, and no note (it covers the usual day).
    expect(after?.text).toMatch(/^Daily balance digest: The feed saw 0 rises and 0 falls/);
    expect(after?.text).not.toContain('Held below');
    expect(visibleText(after)).not.toContain('changes since');
  });

  it('compare with the oldest reading kept when the one the last digest showed is no longer kept, and say so', async () => {
    const feed = await afterFirstDigest();
    clock.now = at('2026-11-21T10:00:00Z');
    await feed.save({ feed_digest: 'off' });
    clock.now = at('2026-11-22T14:00:00Z');
    await feed.balances('0.0022');
    // Eight days on, the readings before 13:30 on the 22nd are pruned: the first digest's with them.
    clock.now = at('2026-11-30T12:00:00Z');
    await feed.balances('0.0032');
    await feed.save({ feed_digest: 'daily', feed_digest_time: '13:30' });
    clock.now = at('2026-11-30T13:30:00Z');
    await feed.bot.tick();
    const [, on] = feed.digests();
    expect(visibleText(on)).toContain('0.0032 BTC · +0.001 since the oldest reading kept');
    expect(visibleText(on)).toContain(
      `changes since ${slackDate(new Date(at('2026-11-22T14:01:00Z'))).text}, the oldest reading kept`,
    );
    expect(on?.text.endsWith('in this period: +0.002 BTC (2 movements)')).toBe(true);
  });
});
