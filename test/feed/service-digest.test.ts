import { describe, expect, it } from 'vitest';
import { DEMO_BALANCES, num } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import { feedJobsOf } from '../support/jobs.js';
import {
  clock,
  digestsIn,
  env,
  FINANCE,
  instance,
  MINUTE,
  poster,
  request,
  subscription,
  useFeedService,
} from './feed-service-setup.js';

/** The feed service: the daily digest, on time, late and skipped. */

useFeedService();

describe('the digest', () => {
  it('goes out once a day at the local time, with 24-hour changes and the feed’s counts', async () => {
    const { feed, tick } = instance('a', poster, clock);
    await feed.subscribe(request({ digest: { hour: 9, minute: 30, zone: 'Europe/Berlin' } }));
    env.sandbox.setBalances([
      { id: 'BTC', title: 'Bitcoin', balance: num('0.0020') },
      { id: 'USDT-TRC20', title: 'Tether <TRC-20>', balance: num('1') },
    ]);
    clock.now += MINUTE;
    await tick();
    // 09:30 in Berlin is 08:30 UTC in November.
    clock.now = Date.parse('2026-11-21T08:29:59Z');
    expect(poster.repliesIn(FINANCE).filter((p) => p.text.startsWith('Daily'))).toEqual([]);
    await tick();
    clock.now = Date.parse('2026-11-21T08:30:00Z');
    await tick();
    const digests = poster.repliesIn(FINANCE).filter((p) => p.text.startsWith('Daily'));
    expect(digests).toHaveLength(1);
    expect(digests[0]?.text).toBe(
      'Daily balance digest: The feed saw 1 rise and 1 fall since the feed began. Balances: 0.0020 BTC, 1 USDT-TRC20',
    );
    expect(visibleText(digests[0])).toContain('*Bitcoin*\n0.0020 BTC · +0.0008 since the feed began');
    expect(visibleText(digests[0])).toContain('1 USDT-TRC20 · −0.5 since the feed began');
    expect(visibleText(digests[0])).toContain('changes since');
    clock.now += 60 * MINUTE;
    await tick();
    expect(poster.repliesIn(FINANCE).filter((p) => p.text.startsWith('Daily'))).toHaveLength(1);
  });

  it('is sent once, marked late, when the bot was down at its time for less than 12 hours', async () => {
    const { feed } = instance('a', poster, clock);
    await feed.subscribe(request());
    clock.now = Date.parse('2026-11-21T20:59:00Z'); // 11 h 59 min after 09:00 UTC
    const b = instance('b', poster, clock);
    await b.tick();
    await b.tick();
    const digests = poster.repliesIn(FINANCE).filter((p) => p.text.startsWith('Daily'));
    expect(digests.map((d) => d.text)).toEqual([
      'Daily balance digest (late): The feed saw 0 rises and 0 falls in the last 24 hours. Balances: 0.0012 BTC, 1.5 USDT-TRC20',
    ]);
    expect(visibleText(digests[0])).toContain('sent 719 min late: the bot was not running at digest time');
  });

  it('is skipped, never sent twice, when it is 12 hours late or more', async () => {
    const { feed } = instance('a', poster, clock);
    await feed.subscribe(request());
    clock.now = Date.parse('2026-11-21T21:00:00Z');
    const b = instance('b', poster, clock);
    await b.tick();
    expect(poster.repliesIn(FINANCE).filter((p) => p.text.startsWith('Daily'))).toEqual([]);
    expect(b.logs.lines.map((l) => l.msg)).toContain('a digest more than 12 hours late was skipped');
    clock.now = Date.parse('2026-11-22T09:00:00Z');
    await b.tick();
    expect(poster.repliesIn(FINANCE).filter((p) => p.text.startsWith('Daily'))).toHaveLength(1);
  });
});

describe('the digest, in detail', () => {
  const digestAt = async ({ feed, deps }: Pick<ReturnType<typeof instance>, 'feed' | 'deps'>, at: number) => {
    clock.now = at;
    const job = feedJobsOf(deps, feed).digest;
    const [sub] = await job.claim(at, 1);
    return sub ? job.run(sub) : undefined;
  };

  it('is due at the subscription’s next digest time', async () => {
    const { feed, deps } = instance('a', poster, clock);
    await feed.subscribe(request());
    const nine = Date.parse('2026-11-21T09:00:00Z');
    expect(await feedJobsOf(deps, feed).digest.nextDueAt?.(clock.now)).toBe(nine);
    const [sub] = await feedJobsOf(deps, feed).digest.claim(nine, 1);
    expect(sub && feedJobsOf(deps, feed).digest.dueAt(sub)).toBe(nine);
  });

  it('says "as of" the last successful reading, and shows no 24-hour change when nothing moved', async () => {
    const { feed, deps, tick } = instance('a', poster, clock);
    await feed.subscribe(request());
    clock.now = Date.parse('2026-11-21T08:59:00Z');
    await tick();
    expect(await digestAt({ feed, deps }, Date.parse('2026-11-21T09:00:00Z'))).toEqual({ outcome: 'sent' });
    await instance('a', poster, clock).tick();
    const [digest] = digestsIn();
    expect(visibleText(digest)).toContain('2026-11-21T08:59:00Z');
    expect(visibleText(digest)).not.toContain('in 24 h');
    expect(visibleText(digest)).not.toContain('late');
  });

  it('lists a coin that moved and came back to 0 within the day, and folds one that never moved', async () => {
    const { feed, deps, tick } = instance('a', poster, clock);
    await feed.subscribe(request());
    const withTrx = (balance: string) =>
      DEMO_BALANCES.map((b) => (b.id === 'TRX' ? { ...b, balance: num(balance) } : b));
    clock.now = Date.parse('2026-11-22T07:00:00Z');
    env.sandbox.setBalances(withTrx('5'));
    await tick();
    clock.now = Date.parse('2026-11-22T08:00:00Z');
    env.sandbox.setBalances(withTrx('0'));
    await tick();
    expect(await digestAt({ feed, deps }, Date.parse('2026-11-22T09:00:00Z'))).toEqual({ outcome: 'sent' });
    await tick();
    const text = visibleText(digestsIn().at(-1));
    expect(text).toContain('*TRON*\n0 TRX · 0 in 24 h');
    expect(text).toContain('and 1 more at 0');
    expect(text).not.toContain('ETH');
  });

  it('compares with the reading from 24 hours before, not the first one', async () => {
    const { feed, deps, tick } = instance('a', poster, clock);
    await feed.subscribe(request());
    env.sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num('0.0100') }]);
    clock.now = Date.parse('2026-11-21T08:30:00Z');
    await tick();
    env.sandbox.setBalances([{ id: 'BTC', title: 'Bitcoin', balance: num('0.0150') }]);
    clock.now = Date.parse('2026-11-22T08:00:00Z');
    await tick();
    expect(await digestAt({ feed, deps }, Date.parse('2026-11-22T09:00:00Z'))).toEqual({ outcome: 'sent' });
    await tick();
    const digest = digestsIn().at(-1);
    expect(visibleText(digest)).toContain('0.0150 BTC · +0.005 in 24 h');
    expect(digest?.text).toBe(
      'Daily balance digest: The feed saw 1 rise and 0 falls in the last 24 hours. BTC over 7 days: Nov 21 0.0100, Nov 22 0.0150. Balances: 0.0150 BTC',
    );
  });

  it('is marked late from five minutes late', async () => {
    const { feed, deps, tick } = instance('a', poster, clock);
    await feed.subscribe(request());
    expect(await digestAt({ feed, deps }, Date.parse('2026-11-21T09:05:00Z'))).toEqual({ outcome: 'sent' });
    await tick();
    expect(digestsIn()[0]?.text).toMatch(/^Daily balance digest \(late\)/);
  });

  it('sends nothing, quietly, when there is no reading to show', async () => {
    const { feed, deps, tick } = instance('a', poster, clock);
    await feed.subscribe(request());
    await env.store.db.deleteFrom('balance_history').execute();
    expect(await digestAt({ feed, deps }, Date.parse('2026-11-21T09:00:00Z'))).toEqual({
      outcome: 'unchanged',
      quiet: true,
    });
    await tick();
    expect(digestsIn()).toEqual([]);
    expect((await subscription()).next_digest_at).toBe(Date.parse('2026-11-22T09:00:00Z'));
  });

  it('logs how late a skipped digest was', async () => {
    const { feed } = instance('a', poster, clock);
    await feed.subscribe(request());
    const b = instance('b', poster, clock);
    expect(await digestAt(b, Date.parse('2026-11-21T21:30:00Z'))).toEqual({
      outcome: 'unchanged',
      quiet: true,
    });
    expect(b.logs.lines.find((l) => l.msg === 'a digest more than 12 hours late was skipped')).toMatchObject({
      level: 'warn',
      channel: FINANCE,
      lateMinutes: 750,
    });
  });

  it('is not sent by an instance whose lease ran out', async () => {
    const a = instance('a', poster, clock, {}, { leaseMs: 1000 });
    const b = instance('b', poster, clock, {}, { leaseMs: 1000 });
    await a.feed.subscribe(request());
    const nine = Date.parse('2026-11-21T09:00:00Z');
    const [aDigest, bDigest] = [feedJobsOf(a.deps, a.feed).digest, feedJobsOf(b.deps, b.feed).digest];
    const [stale] = await aDigest.claim(nine, 1);
    clock.now = nine + 2000;
    const [fresh] = await bDigest.claim(clock.now, 1);
    expect(fresh && (await bDigest.run(fresh))).toEqual({ outcome: 'sent' });
    expect(stale && (await aDigest.run(stale))).toEqual({ outcome: 'lease_lost' });
    await b.tick();
    expect(digestsIn()).toHaveLength(1);
  });
});
