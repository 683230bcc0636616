import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { serviceState } from '../../src/service-state.js';
import { ONE_WORKSPACE } from '../../src/store/keys.js';
import { WATCH_CHECKS_AT_ONCE, watchPollJob } from '../../src/watches/service.js';
import { visibleText } from '../support/block-kit.js';
import { captureLogs } from '../support/bolt.js';
import { NOW } from '../support/factories.js';
import { latest } from '../support/fake-slack.js';
import { RETENTION_DAYS, servingNone } from '../support/jobs.js';
import {
  CHANNEL,
  card,
  clock,
  env,
  instance,
  MINUTE,
  OPEN,
  PART_PAID,
  request,
  SECOND,
  useWatchService,
  world,
} from './watch-service-setup.js';

/** The watch service: checking a watched invoice, and a watch whose invoice cannot be read. */

useWatchService();

describe('checking a watched invoice', () => {
  it('posts nothing while nothing changes', async () => {
    const a = instance('a');
    await a.watches.start(request());
    clock.now += 31_000;
    expect(await a.tick()).toEqual([{ outcome: 'unchanged', invoiceId: OPEN, quiet: true }]);
    expect(world.poster.calls).toEqual([`post ${CHANNEL}`]);
  });

  it('runs 16 checks at once for one key, claimed 8 at a time; 48 and 24 for many keys paced in the store', () => {
    const a = instance('a');
    expect([a.poll.concurrency, a.poll.claimBatch]).toEqual([16, 8]);
    const many = watchPollJob({
      store: env.store,
      gate: serviceState(env.store, captureLogs().logger, { installation: ONE_WORKSPACE }),
      perSecond: 5,
      watchesOf: servingNone,
      pollSeconds: 30,
      endedRetentionDays: RETENTION_DAYS,
    });
    expect(WATCH_CHECKS_AT_ONCE).toBe(48);
    expect([many.concurrency, many.claimBatch]).toEqual([48, 24]);
  });

  it('checks no earlier than the cadence says', async () => {
    const a = instance('a');
    await a.watches.start(request());
    clock.now += 29_000;
    expect(await a.tick()).toEqual([]);
    expect(env.sandbox.requests).toHaveLength(1);
  });

  it('keeps a late check’s next one on time: the step counts from when it was due', async () => {
    const a = instance('a');
    await a.watches.start(request());
    const started = clock.now;
    const due = async () =>
      (
        await env.store.db
          .selectFrom('watched_invoices')
          .select('next_poll_at')
          .where('invoice_id', '=', OPEN)
          .executeTakeFirstOrThrow()
      ).next_poll_at;
    // Made 4 s after it was due: the next is due 60 s after the start, not 64 s.
    clock.now = started + 34_000;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['unchanged']);
    expect(await due()).toBe(started + 60_000);
    // More than half a step late: the next one counts from now.
    clock.now = started + 76_000;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['unchanged']);
    expect(await due()).toBe(started + 106_000);
  });

  it('checks within a minute when the clock is stepped back ten minutes, not ten minutes later', async () => {
    const a = instance('a');
    await a.watches.start(request());
    clock.now += 30_000;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['unchanged']);
    // An NTP correction: the clock goes back ten minutes; the next check was due 30 s on.
    clock.now -= 10 * 60_000;
    const asked = env.sandbox.requests.length;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['unchanged']);
    expect(env.sandbox.requests).toHaveLength(asked + 1);
    // From there on the cadence as usual, by the clock as it is now.
    clock.now += 29_000;
    expect(await a.tick()).toEqual([]);
    clock.now += 1_000;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['unchanged']);
  });

  it('on a change: edits the card and replies once in its thread, naming the change and the watcher', async () => {
    const a = instance('a');
    await a.watches.start(request());
    env.sandbox.updateInvoice(OPEN, PART_PAID);
    clock.now += 31_000;
    const results = await a.tick();
    expect(results.map((r) => r.outcome)).toEqual(['changed', 'sent', 'sent']);
    const replies = world.poster.repliesIn(CHANNEL, card().ts);
    expect(replies).toHaveLength(1);
    expect(visibleText(replies[0])).toBe(
      '<@U0WATCHER> *Order #1042 — annual support plan* changed:\n• *Payment*: Not paid → Partially paid\nInvoice `5b8e1f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b` · as sent: payment `none` → `partially_paid` · read <!date^1795262431^{date_short_pretty} at {time}|2026-11-21T12:00:31Z>',
    );
    expect(card().edits).toHaveLength(1);
    expect(visibleText(latest(card()))).toContain('*Payment*\nPartially paid');
    expect(world.poster.problems).toEqual([]);
    // Announced once: the next check sees nothing new.
    clock.now += 31_000;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['unchanged']);
  });

  it('makes one call per check however many channels watch the invoice, and tells each', async () => {
    const a = instance('a');
    await a.watches.start(request());
    await a.watches.start(request({ channelId: 'C0FINANCE', userId: 'U0FIN' }));
    env.sandbox.reset();
    env.sandbox.updateInvoice(OPEN, PART_PAID);
    clock.now += 31_000;
    await a.tick();
    expect(env.sandbox.requests).toHaveLength(1);
    expect(world.poster.calls.filter((c) => c.startsWith('post'))).toHaveLength(4); // 2 cards + 2 thread replies
    // Each thread is told, mentioning its own watcher (the watches are told in the order of their ids).
    const replies = world.poster.messages.slice(-2).map((m) => visibleText(m));
    expect(replies.filter((said) => said.startsWith('<@U0FIN>'))).toHaveLength(1);
    expect(replies.filter((said) => said.startsWith('<@U0WATCHER>'))).toHaveLength(1);
  });

  it('backs off quietly while the service fails, and never posts about it', async () => {
    const a = instance('a');
    await a.watches.start(request());
    env.sandbox.failNext({ kind: 'status', status: 503 }, 100);
    clock.now += 31_000;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['service_unavailable']);
    clock.now += 31_000;
    expect(await a.tick()).toEqual([]); // backed off: 60 s after a failure, not 30
    clock.now += 30_000;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['service_unavailable']);
    expect(world.poster.calls).toEqual([`post ${CHANNEL}`]);
  });

  it('pauses every watch while the key is rejected, logs it once, probes once a minute, and resumes', async () => {
    env.sandbox.updateInvoice(DEMO_INVOICE_IDS.paid, SECOND);
    const a = instance('a');
    await a.watches.start(request());
    await a.watches.start(request({ invoiceId: DEMO_INVOICE_IDS.paid }));
    const unauthorized = { kind: 'status' as const, status: 401, body: '{"name":"UnauthorizedError"}' };
    env.sandbox.requests.length = 0;
    env.sandbox.failNext(unauthorized, 100);
    clock.now += 31_000;
    // Both were due in the same batch; from then on, one probe a minute, not one call per watch.
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['paused', 'paused']);
    clock.now += 30_000;
    expect(await a.tick()).toEqual([]);
    clock.now += 31_000;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['paused']);
    expect(env.sandbox.requests).toHaveLength(3);
    expect(a.logs.lines.filter((l) => l.level === 'error').map((l) => l.msg)).toEqual([
      'the payment service rejects PAYMENT_API_KEY: watches and feeds are paused until it works again',
    ]);
    env.sandbox.clearFaults();
    clock.now += 61_000;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['unchanged']);
    expect(a.logs.lines.map((l) => l.msg)).toContain(
      'the payment service accepts PAYMENT_API_KEY again: watches and feeds resume',
    );
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['unchanged']); // the other one too, at once
  });

  it('ends every watch, saying so in the thread, when the invoice no longer exists', async () => {
    const a = instance('a');
    await a.watches.start(request());
    env.sandbox.removeInvoice(OPEN);
    clock.now += 31_000;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['ended', 'sent', 'sent']);
    expect(visibleText(world.poster.repliesIn(CHANNEL, card().ts)[0])).toBe(
      '<@U0WATCHER> No longer watching *Order #1042 — annual support plan*: the payment service no longer knows this invoice.',
    );
    expect(JSON.stringify(latest(card()).blocks)).not.toContain('stop_watch');
    expect(await a.watches.list(CHANNEL)).toEqual([]);
    clock.now += 600_000;
    expect(await a.tick()).toEqual([]); // no more polling
  });
});

describe('a watch whose invoice cannot be read', () => {
  const DAY = 24 * 60 * MINUTE;
  const firstFailure = '<!date^1795262431^{date_short_pretty} at {time}|2026-11-21T12:00:31Z>';
  const watchRow = async () =>
    env.store.db.selectFrom('watched_invoices').selectAll().where('invoice_id', '=', OPEN).executeTakeFirst();

  it.each([
    ['a 500', { kind: 'status', status: 500 }],
    ['a 429', { kind: 'status', status: 429, headers: { 'retry-after': '0' } }],
    ['a time-out', { kind: 'hang' }],
    ['an answer that fails validation', { kind: 'status', status: 200, body: '{"result":{"id":42}}' }],
  ] as const)(
    'still ends after WATCH_MAX_DAYS when every read is %s, saying since when it could not read it',
    async (_what, fault) => {
      env.sandbox.updateInvoice(OPEN, { timeout: '2099-01-01T00:00:00.000Z' });
      const a = instance('a', { maxDays: 1 }, undefined, { paymentTimeoutMs: 100 });
      await a.watches.start(request());
      env.sandbox.failNext(fault, 10_000);
      clock.now += 31_000;
      expect((await a.tick()).map((r) => r.outcome)).not.toContain('ended');
      // Failing reads back off, but the last check still falls when the watch is due to end.
      clock.now = NOW.getTime() + DAY - 2 * MINUTE;
      await a.tick();
      expect(await watchRow()).toMatchObject({ next_poll_at: NOW.getTime() + DAY });
      expect(await a.watches.list(CHANNEL)).toHaveLength(1);

      clock.now = NOW.getTime() + DAY;
      expect((await a.tick()).map((r) => r.outcome)).toEqual(['ended', 'sent', 'sent']);
      expect(await a.watches.list(CHANNEL)).toEqual([]);
      const why = `it was watched for the longest a watch lasts, 1 day; could not read the invoice since ${firstFailure}, so the card shows it as last read`;
      expect(visibleText(world.poster.repliesIn(CHANNEL, card().ts)[0])).toBe(
        `<@U0WATCHER> No longer watching *Order #1042 — annual support plan*: ${why}.`,
      );
      expect(visibleText(latest(card()))).toContain(`: ${why}`);
      expect(JSON.stringify(latest(card()).blocks)).not.toContain('stop_watch');
      expect(world.poster.problems).toEqual([]);
      expect(
        a.logs.lines.find(
          (l) => l.msg === 'watch ended on time without a fresh reading: the invoice could not be read',
        ),
      ).toMatchObject({ level: 'warn', invoiceId: OPEN, unreadSince: '2026-11-21T12:00:31.000Z' });
      expect(await watchRow()).toBeUndefined(); // nothing more is polled
    },
  );

  it('still ends after the expiry and the grace by the last expiry it read', async () => {
    const expiresAt = NOW.getTime() + 60 * MINUTE;
    env.sandbox.updateInvoice(OPEN, { timeout: new Date(expiresAt).toISOString() });
    const a = instance('a', { graceMinutes: 60 });
    await a.watches.start(request());
    env.sandbox.failNext({ kind: 'status', status: 503 }, 10_000);
    clock.now += 31_000;
    await a.tick();
    clock.now = expiresAt + 59 * MINUTE;
    await a.tick();
    expect(await a.watches.list(CHANNEL)).toHaveLength(1);
    clock.now = expiresAt + 60 * MINUTE;
    await a.tick();
    expect(await a.watches.list(CHANNEL)).toEqual([]);
    expect(visibleText(world.poster.repliesIn(CHANNEL, card().ts)[0])).toBe(
      `<@U0WATCHER> No longer watching *Order #1042 — annual support plan*: its expiry passed more than 60 minutes ago; could not read the invoice since ${firstFailure}, so the card shows it as last read.`,
    );
  });

  it('forgets the failures once a read works again: the end then says nothing of them', async () => {
    env.sandbox.updateInvoice(OPEN, { timeout: '2099-01-01T00:00:00.000Z' });
    const a = instance('a', { maxDays: 1 });
    await a.watches.start(request());
    env.sandbox.failNext({ kind: 'status', status: 500 }, 3);
    clock.now += 31_000;
    await a.tick();
    expect(await watchRow()).toMatchObject({ failing_since: clock.now, failures: 1 });
    env.sandbox.clearFaults();
    clock.now += 10 * MINUTE;
    await a.tick();
    expect(await watchRow()).toMatchObject({ failing_since: null, failures: 0 });
    clock.now = NOW.getTime() + DAY;
    await a.tick();
    expect(visibleText(world.poster.repliesIn(CHANNEL, card().ts)[0])).toBe(
      '<@U0WATCHER> No longer watching *Order #1042 — annual support plan*: it was watched for the longest a watch lasts, 1 day.',
    );
  });
});
