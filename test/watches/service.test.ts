import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { serviceState } from '../../src/service-state.js';
import { SlackPostError } from '../../src/slack/calls.js';
import { ONE_WORKSPACE } from '../../src/store/keys.js';
import { checkClaims } from '../../src/watches/queries-checks.js';
import { WATCH_CHECKS_AT_ONCE, watchPollJob } from '../../src/watches/service.js';
import { visibleText } from '../support/block-kit.js';
import { captureLogs, type DepsOptions, HOME_TEAM } from '../support/bolt.js';
import { NOW } from '../support/factories.js';
import { latest } from '../support/fake-slack.js';
import { RETENTION_DAYS, servingNone } from '../support/jobs.js';
import { useWatchWorld, watchRequest } from '../support/watch-world.js';

const world = useWatchWorld();
const { env, clock } = world;
const OPEN = DEMO_INVOICE_IDS.open;
const CHANNEL = 'C0SUPPORT';
const MINUTE = 60_000;
/** A change that leaves the invoice awaiting payment (part of it paid), so its watch goes on. */
const PART_PAID = { payStatus: 'partially_paid' };
/** The "paid" demo invoice as one that still awaits payment, far from its expiry: a second one to watch. */
const SECOND = { status: 'open', payStatus: 'none', timeout: '2099-01-01T00:00:00.000Z' };

/** One bot instance: its watches, its outbox, its clock. Several share the store and the fake Slack. */
const instance = (name: string, settings = {}, wakeOutbox?: () => void, payments: DepsOptions = {}) =>
  world.instance({ name, settings, wakeOutbox, payments });

const request = watchRequest;

const card = () => {
  const [first] = world.poster.repliesIn(CHANNEL);
  if (!first) throw new Error('no card posted');
  return first;
};

describe('starting a watch', () => {
  it('posts the live card in the channel, reads the invoice once, and stores the watch', async () => {
    const { watches } = instance('a');
    const result = await watches.start(request());
    expect(result).toMatchObject({ kind: 'started', inThread: false });
    expect(world.poster.calls).toEqual([`post ${CHANNEL}`]);
    expect(visibleText(card())).toContain('Watched since');
    expect(visibleText(card())).toContain('<@U0WATCHER>');
    expect(JSON.stringify(card().blocks)).toContain('"action_id":"stop_watch"');
    expect(env.sandbox.requests).toHaveLength(1);
    expect(await watches.list(CHANNEL)).toMatchObject([
      { invoiceId: OPEN, status: 'open', payStatus: 'none' },
    ]);
    expect(world.poster.problems).toEqual([]);
  });

  it('puts the live card in a thread when asked to', async () => {
    const { watches } = instance('a');
    expect(await watches.start(request({ threadTs: '1699999999.000100' }))).toMatchObject({ inThread: true });
    expect(world.poster.calls).toEqual([`post ${CHANNEL} thread 1699999999.000100`]);
  });

  it('keeps one watch per invoice per channel', async () => {
    const { watches } = instance('a');
    await watches.start(request());
    expect(await watches.start(request({ userId: 'U0OTHER' }))).toMatchObject({
      kind: 'already',
      since: NOW,
    });
    expect(world.poster.messages).toHaveLength(1);
    expect(await watches.start(request({ channelId: 'C0OTHER' }))).toMatchObject({ kind: 'started' });
  });

  it('refuses beyond the channel’s limit, posting nothing', async () => {
    env.sandbox.updateInvoice(DEMO_INVOICE_IDS.paid, SECOND);
    const { watches } = instance('a', { limitPerChannel: 1 });
    await watches.start(request());
    expect(await watches.start(request({ invoiceId: DEMO_INVOICE_IDS.paid }))).toEqual({
      kind: 'limit',
      limit: 1,
    });
    expect(world.poster.messages).toHaveLength(1);
  });

  it('refuses an invoice whose expiry and grace have passed, posting nothing', async () => {
    const { watches } = instance('a');
    env.sandbox.updateInvoice(OPEN, { timeout: new Date(NOW.getTime() - 61 * MINUTE).toISOString() });
    expect(await watches.start(request())).toMatchObject({ kind: 'expired' });
    env.sandbox.updateInvoice(OPEN, { timeout: new Date(NOW.getTime() - 59 * MINUTE).toISOString() });
    expect(await watches.start(request())).toMatchObject({ kind: 'started' });
  });

  it('stores nothing where the bot cannot post', async () => {
    const { watches } = instance('a');
    world.poster.closedChannels.add(CHANNEL);
    expect(await watches.start(request())).toEqual({ kind: 'not_in_channel' });
    expect(await watches.list(CHANNEL)).toEqual([]);
  });

  it('lets the service’s answer through when the invoice does not exist', async () => {
    const { watches } = instance('a');
    await expect(
      watches.start(request({ invoiceId: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee' as never })),
    ).rejects.toMatchObject({
      code: 'invoice_not_found',
    });
    expect(world.poster.messages).toEqual([]);
  });
});

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

describe('ending a watch', () => {
  it('after the invoice’s expiry plus the grace, with one last check', async () => {
    const expiresAt = NOW.getTime() + 22 * 60 * MINUTE;
    env.sandbox.updateInvoice(OPEN, { timeout: new Date(expiresAt).toISOString() });
    const a = instance('a', { graceMinutes: 60 });
    await a.watches.start(request());
    clock.now = expiresAt + 60 * MINUTE - 1000;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['unchanged']);
    clock.now += 1000;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['ended', 'sent', 'sent']);
    expect(visibleText(world.poster.repliesIn(CHANNEL, card().ts)[0])).toContain(
      'its expiry passed more than 60 minutes ago; this was the last check',
    );
  });

  it('after WATCH_MAX_DAYS whatever happens', async () => {
    env.sandbox.updateInvoice(OPEN, { timeout: '2099-01-01T00:00:00.000Z' });
    const a = instance('a', { maxDays: 1 });
    await a.watches.start(request());
    clock.now += 24 * 60 * MINUTE;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['ended', 'sent', 'sent']);
    expect(visibleText(world.poster.repliesIn(CHANNEL, card().ts)[0])).toContain(
      'the longest a watch lasts, 1 day',
    );
  });

  it('when someone stops it: the card loses its Stop button and the thread says who', async () => {
    const a = instance('a');
    await a.watches.start(request());
    const [watch] = await a.watches.list(CHANNEL);
    expect(await a.watches.stop(watch?.id ?? '', 'U0STOPPER')).toEqual({
      kind: 'stopped',
      title: 'Order #1042 — annual support plan',
    });
    expect(await a.watches.stop(watch?.id ?? '', 'U0STOPPER')).toEqual({ kind: 'not_watched' });
    await a.tick();
    expect(visibleText(world.poster.repliesIn(CHANNEL, card().ts)[0])).toContain('stopped by <@U0STOPPER>');
    expect(JSON.stringify(latest(card()).blocks)).not.toContain('stop_watch');
    expect(visibleText(latest(card()))).toContain('No longer watched since');
  });

  it('quietly, when its card was deleted', async () => {
    const a = instance('a');
    await a.watches.start(request());
    card().deleted = true;
    env.sandbox.updateInvoice(OPEN, PART_PAID);
    clock.now += 31_000;
    const outcomes = (await a.tick()).map((r) => r.outcome);
    expect(outcomes).toEqual(['changed', 'dropped', 'sent']);
    expect(await a.watches.list(CHANNEL)).toEqual([]);
    expect(a.logs.lines.map((l) => l.msg)).toContain('watch ended: Slack will not take its messages');
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

describe('a watch in a public channel the bot has not joined', () => {
  it.each([
    ['a 429', new SlackPostError('rate_limited', 'ratelimited', 1000)],
    ['a time-out', new SlackPostError('transient', undefined)],
  ])('after %s on the "paid" reply, posts it once and keeps watching', async (_what, failure) => {
    const a = instance('a');
    await a.watches.start(request({ channelId: 'C0PUBLIC' }));
    const [parent] = world.poster.repliesIn('C0PUBLIC');
    // History needs membership: Slack will not let the bot look there.
    world.poster.find = async () => {
      throw new SlackPostError('not_in_channel', 'not_in_channel');
    };
    const post = world.poster.post;
    let failed = false;
    world.poster.post = async (message) => {
      if (!message.threadTs || failed) return post(message);
      failed = true;
      throw failure;
    };
    env.sandbox.updateInvoice(OPEN, PART_PAID);
    clock.now += 31_000;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['changed', 'sent', 'retry_later']);
    clock.now += 2000;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['sent']);
    const replies = world.poster.repliesIn('C0PUBLIC', parent?.ts);
    expect(replies.map((m) => visibleText(m))).toEqual([
      expect.stringContaining('*Payment*: Not paid → Partially paid'),
    ]);
    expect(await a.watches.list('C0PUBLIC')).toHaveLength(1);
  });
});

describe('exactly once, across crashes and instances', () => {
  it('announces a change made while no instance ran, once, when one comes back', async () => {
    await instance('before-crash').watches.start(request());
    env.sandbox.updateInvoice(OPEN, PART_PAID);
    clock.now += 10 * MINUTE;
    const after = instance('after-restart');
    await after.tick();
    await after.tick();
    expect(world.poster.repliesIn(CHANNEL, card().ts)).toHaveLength(1);
  });

  it('delivers what a dead instance decided but never sent, once', async () => {
    const a = instance('a');
    await a.watches.start(request());
    env.sandbox.updateInvoice(OPEN, PART_PAID);
    clock.now += 31_000;
    for (const row of await a.poll.claim(clock.now, 10)) await a.poll.run(row); // decided, then "died"
    const b = instance('b');
    await b.tick();
    expect(world.poster.repliesIn(CHANNEL, card().ts)).toHaveLength(1);
  });

  it('does not post again what a dead instance posted but never marked sent', async () => {
    const a = instance('a');
    await a.watches.start(request());
    env.sandbox.updateInvoice(OPEN, PART_PAID);
    clock.now += 31_000;
    for (const row of await a.poll.claim(clock.now, 10)) await a.poll.run(row);
    // "a" marks the reply attempted and posts it, then dies before recording that it did.
    const [update] = await a.outbox.claim(clock.now, 10);
    if (!update) throw new Error('expected the card edit');
    await a.outbox.run(update);
    const [replyRow] = await a.outbox.claim(clock.now, 10);
    await env.store.db
      .updateTable('outbox')
      .set({ attempted_at: clock.now })
      .where('id', '=', replyRow?.id ?? 0)
      .execute();
    await world.poster.post({
      channel: CHANNEL,
      threadTs: card().ts,
      text: 'x',
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'x' } }],
      messageId: `outbox-${replyRow?.id}`,
    });
    clock.now += 31_000; // its lease runs out
    const b = instance('b');
    expect((await b.tick()).map((r) => r.outcome)).toEqual(['unchanged', 'found']);
    expect(world.poster.repliesIn(CHANNEL, card().ts)).toHaveLength(1);
  });

  it('lets only the lease holder record a decision: a stalled instance’s late result is dropped', async () => {
    const a = instance('a');
    await a.watches.start(request());
    env.sandbox.updateInvoice(OPEN, PART_PAID);
    clock.now += 31_000;
    const [stalled] = await a.poll.claim(clock.now, 10);
    clock.now += 31_000; // a's lease runs out before it finishes
    const b = instance('b');
    await b.tick();
    if (!stalled) throw new Error('nothing claimed');
    expect(await a.poll.run(stalled)).toEqual({ outcome: 'lease_lost', invoiceId: OPEN });
    await a.tick();
    expect(world.poster.repliesIn(CHANNEL, card().ts)).toHaveLength(1);
  });

  it('never gives the same due check to two instances', async () => {
    env.sandbox.updateInvoice(DEMO_INVOICE_IDS.paid, SECOND);
    const a = instance('a');
    await a.watches.start(request());
    await a.watches.start(request({ invoiceId: DEMO_INVOICE_IDS.paid }));
    clock.now += 31_000;
    const b = instance('b');
    const [first, second] = await Promise.all([a.poll.claim(clock.now, 1), b.poll.claim(clock.now, 10)]);
    expect([...(first ?? []), ...(second ?? [])].map((r) => r.invoice_id).sort()).toEqual(
      [OPEN, DEMO_INVOICE_IDS.paid].sort(),
    );
  });
});

describe('the outbox', () => {
  it('waits out a rate limit, then sends', async () => {
    const a = instance('a');
    await a.watches.start(request());
    await a.watches.stop((await a.watches.list(CHANNEL))[0]?.id ?? '', 'U0X');
    world.poster.failNext(new SlackPostError('rate_limited', 'ratelimited', 30_000));
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['retry_later']);
    clock.now += 29_000;
    expect(await a.tick()).toEqual([]);
    clock.now += 1000;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['sent', 'sent']);
  });

  it('keeps a channel’s messages in order: a card edit that waits holds back its thread reply', async () => {
    const a = instance('a');
    await a.watches.start(request());
    env.sandbox.updateInvoice(OPEN, PART_PAID);
    clock.now += 31_000;
    world.poster.failNext(new SlackPostError('transient', undefined));
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['changed', 'retry_later']);
    expect(world.poster.repliesIn(CHANNEL, card().ts)).toEqual([]);
    clock.now += 2000;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['sent', 'sent']);
  });

  it('gives up on a message Slack refuses, logging why', async () => {
    const a = instance('a');
    await a.watches.start(request());
    await a.watches.stop((await a.watches.list(CHANNEL))[0]?.id ?? '', 'U0X');
    world.poster.failNext(new SlackPostError('refused', 'invalid_blocks'));
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['dropped', 'sent']);
    expect(a.logs.lines.find((l) => l.msg === 'gave up on a message to Slack')).toBeDefined();
  });
});

describe('watches, in detail', () => {
  it('lets one of two simultaneous starts win; the loser posts no card', async () => {
    const a = instance('a');
    const b = instance('b');
    const results = await Promise.all([a.watches.start(request()), b.watches.start(request())]);
    // The loser is told the watch exists: already live, or its card still being posted.
    expect(results.map((r) => r.kind).sort()).toEqual([
      expect.stringMatching(/^(already|posting)$/),
      'started',
    ]);
    expect(world.poster.calls).toEqual([`post ${CHANNEL}`]);
    expect(await a.watches.list(CHANNEL)).toHaveLength(1);
  });

  it('says when the next check falls due, and lists a person’s watches wherever they are', async () => {
    const { watches, poll } = instance('a');
    expect(await poll.nextDueAt?.(clock.now)).toBeUndefined();
    await watches.start(request());
    await watches.start(request({ channelId: 'C0OTHER' }));
    const due = await poll.nextDueAt?.(clock.now);
    expect(due).toBeGreaterThan(clock.now);
    const [row] = await poll.claim(due ?? 0, 1);
    expect(row && poll.dueAt(row)).toBe(due);
    expect(await poll.nextDueAt?.(due ?? 0)).toBeUndefined(); // leased: not due for anyone else
    expect((await watches.startedBy(HOME_TEAM, 'U0WATCHER')).map((w) => w.channelId).sort()).toEqual([
      'C0OTHER',
      CHANNEL,
    ]);
    expect(await watches.startedBy('T0OTHER', 'U0WATCHER')).toEqual([]);
  });

  it('ends a watch whose channel closed to the bot, and logs it', async () => {
    const { watches, tick, logs } = instance('a');
    await watches.start(request());
    env.sandbox.updateInvoice(OPEN, PART_PAID);
    world.poster.closedChannels.add(CHANNEL);
    world.poster.failNext(new SlackPostError('not_in_channel', 'not_in_channel'), 5);
    clock.now += 10 * MINUTE;
    await tick();
    expect(await watches.list(CHANNEL)).toEqual([]);
    expect(logs.lines.find((l) => l.msg === 'watch ended: Slack will not take its messages')).toMatchObject({
      reason: 'not_in_channel',
    });
  });

  it('ends a watch once when two people stop it at the same moment, and stops counting it', async () => {
    const a = instance('a');
    const b = instance('b');
    await a.watches.start(request());
    expect(await checkClaims(world.env.store).countAllActive()).toBe(1);
    const [watch] = await a.watches.list(CHANNEL);
    const results = await Promise.all([
      a.watches.stop(watch?.id ?? '', 'U0A'),
      b.watches.stop(watch?.id ?? '', 'U0B'),
    ]);
    expect(results.map((r) => r.kind).sort()).toEqual(['not_watched', 'stopped']);
    await a.tick();
    expect(
      world.poster.repliesIn(CHANNEL, card().ts).filter((m) => m.text.includes('No longer watching')),
    ).toHaveLength(1);
    expect(await checkClaims(world.env.store).countAllActive()).toBe(0);
  });

  it('stops by invoice, and says it was not watched the second time', async () => {
    const { watches } = instance('a');
    await watches.start(request());
    expect(await watches.stopInvoice(CHANNEL, OPEN, 'U0STOPPER')).toMatchObject({ kind: 'stopped' });
    expect(await watches.stopInvoice(CHANNEL, OPEN, 'U0STOPPER')).toEqual({ kind: 'not_watched' });
  });
});

describe('waking the outbox', () => {
  it('only when a check changed or ended something; a check that found nothing is logged quietly', async () => {
    let wakes = 0;
    const a = instance('a', {}, () => (wakes += 1));
    await a.watches.start(request());
    const check = async () => {
      clock.now += 31_000;
      const [row] = await a.poll.claim(clock.now, 10);
      if (!row) throw new Error('expected a due check');
      return a.poll.run(row);
    };
    expect(await check()).toMatchObject({ outcome: 'unchanged', quiet: true });
    expect(wakes).toBe(0);
    env.sandbox.updateInvoice(OPEN, PART_PAID);
    expect(await check()).toMatchObject({ outcome: 'changed', quiet: false });
    expect(wakes).toBe(1);
    env.sandbox.removeInvoice(OPEN);
    expect(await check()).toMatchObject({ outcome: 'ended' });
    expect(wakes).toBe(2);
  });

  it('when someone stops a watch, not when there was none to stop', async () => {
    let wakes = 0;
    const a = instance('a', {}, () => (wakes += 1));
    await a.watches.start(request());
    const [watch] = await a.watches.list(CHANNEL);
    await a.watches.stop(watch?.id ?? '', 'U0STOPPER');
    await a.watches.stop(watch?.id ?? '', 'U0STOPPER');
    expect(wakes).toBe(1);
  });

  it('when a check ends a watch that has lasted its longest', async () => {
    let wakes = 0;
    const a = instance('a', { maxDays: 1 }, () => (wakes += 1));
    env.sandbox.updateInvoice(OPEN, { timeout: new Date(clock.now + 30 * 86_400_000).toISOString() });
    await a.watches.start(request());
    clock.now += 86_400_000 + 1000;
    const [row] = await a.poll.claim(clock.now, 10);
    expect(row && (await a.poll.run(row))).toMatchObject({ outcome: 'ended', quiet: false });
    expect(wakes).toBe(1);
  });
});
