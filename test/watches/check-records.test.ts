import { describe, expect, it } from 'vitest';
import { PacedOutError } from '../../src/payments/index.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import type { StartRequest } from '../../src/watches/service.js';
import { visibleText } from '../support/block-kit.js';
import { HOME_TEAM } from '../support/bolt.js';
import { NOW } from '../support/factories.js';
import { latest } from '../support/fake-slack.js';
import { useWatchWorld } from '../support/watch-world.js';

/**
 * What a check records, and when the next one falls due: the cadence near the end of a watch,
 * a Stop that lands while a check is under way, a store or a service that fails, and what an
 * operator reads in the log when a watch ends without a fresh reading.
 */

const world = useWatchWorld();
const { env, clock } = world;
const OPEN = DEMO_INVOICE_IDS.open;
const CHANNEL = 'C0SUPPORT';
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

const request: StartRequest = { teamId: HOME_TEAM, channelId: CHANNEL, userId: 'U0WATCHER', invoiceId: OPEN };
const polled = () =>
  env.store.db
    .selectFrom('watched_invoices')
    .selectAll()
    .where('invoice_id', '=', OPEN)
    .executeTakeFirstOrThrow();
const outcomes = async (tick: () => Promise<{ outcome: string }[]>) => (await tick()).map((r) => r.outcome);

/**
 * An instance whose store runs `hook` just before the next transaction it begins (a check's
 * record): what another instance does there lands between the check's read and its write.
 */
function withHook() {
  let hook: (() => Promise<unknown>) | undefined;
  const store = {
    ...env.store,
    transaction: async <T>(work: Parameters<typeof env.store.transaction<T>>[0]) => {
      const before = hook;
      hook = undefined;
      await before?.();
      return env.store.transaction(work);
    },
  };
  const a = world.instance({ store });
  return {
    ...a,
    beforeNextWrite: (what: () => Promise<unknown>) => {
      hook = what;
    },
  };
}

describe('when the next check falls due', () => {
  it('near the invoice’s expiry, still a cadence step away, not a second', async () => {
    env.sandbox.updateInvoice(OPEN, { timeout: new Date(NOW.getTime() + 30 * MINUTE).toISOString() });
    const a = world.instance();
    await a.watches.start(request);
    clock.now += 31_000;
    expect(await outcomes(a.tick)).toEqual(['unchanged']);
    clock.now += 1000;
    expect(await a.tick()).toEqual([]);
  });

  it('never within a second of the last, even when the watch ends sooner: it ends at the check a second later', async () => {
    env.sandbox.updateInvoice(OPEN, { timeout: '2099-01-01T00:00:00.000Z' });
    const a = world.instance({ settings: { maxDays: 1 } });
    await a.watches.start(request);
    clock.now = NOW.getTime() + DAY - 500;
    expect(await outcomes(a.tick)).toEqual(['unchanged']);
    expect((await polled()).next_poll_at).toBe(clock.now + 1000);
    clock.now += 500;
    expect(await a.tick()).toEqual([]);
    clock.now += 500;
    expect(await outcomes(a.tick)).toEqual(['ended', 'sent', 'sent']);
  });
});

describe('a check and a Stop at the same moment', () => {
  it('a watch stopped between the check’s read and its write stays stopped: no live card, no news after “stopped by”', async () => {
    const a = withHook();
    const b = world.instance({ name: 'b' });
    await a.watches.start(request);
    await a.watches.start({ ...request, channelId: 'C0FINANCE' }); // goes on: its invoice is still checked
    const [watch] = await a.watches.list(CHANNEL);
    env.sandbox.updateInvoice(OPEN, { payStatus: 'partially_paid' });
    clock.now += 31_000;
    a.beforeNextWrite(() => b.watches.stop(watch?.id ?? '', 'U0STOPPER'));
    await a.tick();
    const [card] = world.poster.repliesIn(CHANNEL);
    if (!card) throw new Error('no card');
    expect(world.poster.repliesIn(CHANNEL, card.ts).map((m) => visibleText(m))).toEqual([
      expect.stringContaining('stopped by <@U0STOPPER>'),
    ]);
    expect(JSON.stringify(latest(card).blocks)).not.toContain('stop_watch');
    const [other] = world.poster.repliesIn('C0FINANCE');
    expect(world.poster.repliesIn('C0FINANCE', other?.ts).map((m) => visibleText(m))).toEqual([
      expect.stringContaining('*Payment*: Not paid → Partially paid'),
    ]);
  });
});

describe('a check that cannot be recorded', () => {
  it('lets the store’s failure through, rather than pass for a lost lease', async () => {
    const a = withHook();
    await a.watches.start(request);
    // A change, recorded with its messages in a transaction (a quiet check's record is the runner's: test/runner-completions.test.ts).
    env.sandbox.updateInvoice(OPEN, { payStatus: 'partially_paid' });
    clock.now += 31_000;
    const failure = new Error('disk I/O error');
    a.beforeNextWrite(() => Promise.reject(failure));
    await expect(a.tick()).rejects.toBe(failure);
  });

  it('records nothing of a failed read once its lease ran out: another instance took the check over', async () => {
    const a = world.instance();
    await a.watches.start(request);
    env.sandbox.failNext({ kind: 'status', status: 503 }, 100);
    clock.now += 31_000;
    const [stalled] = await a.poll.claim(clock.now, 10);
    if (!stalled) throw new Error('nothing claimed');
    clock.now += 31_000;
    await world.instance({ name: 'b' }).tick();
    const taken = await polled();
    expect(await a.poll.run(stalled)).toEqual({ outcome: 'lease_lost', invoiceId: OPEN });
    expect(await polled()).toEqual(taken);
  });

  it('lets a failure that is not the service’s through (a bug), recording nothing', async () => {
    const a = world.instance();
    await a.watches.start(request);
    const before = await polled();
    const bug = new TypeError('a bug');
    a.deps.payments.getInvoice = async () => {
      throw bug;
    };
    clock.now += 31_000;
    await expect(a.tick()).rejects.toBe(bug);
    expect(await polled()).toMatchObject({ failures: 0, snapshot: before.snapshot });
  });
});

describe('what a check writes of its reading', () => {
  it('nothing of an invoice read as stored; a new title, unannounced, is kept for the next check', async () => {
    const a = world.instance();
    await a.watches.start(request);
    const started = await polled();
    clock.now += 31_000;
    const [same] = await a.poll.claim(clock.now, 10);
    if (!same) throw new Error('nothing claimed');
    // The check as the poll job runs it, its record left to the runner.
    const ran = await a.watches.check(same);
    expect(ran).toMatchObject({ outcome: 'unchanged', completion: { failures: 0, failing_since: null } });
    expect(ran.completion).not.toHaveProperty('snapshot');
    await a.poll.run(same);
    env.sandbox.updateInvoice(OPEN, { title: 'Order #1042, corrected' });
    clock.now += 31_000;
    expect(await outcomes(a.tick)).toEqual(['unchanged']);
    expect(JSON.parse((await polled()).snapshot)).toEqual({
      ...JSON.parse(started.snapshot),
      title: 'Order #1042, corrected',
    });
  });
});

describe('while the service is down for everyone (its circuit breaker open)', () => {
  it('pauses the check without a call: no failure counted, checked again a cadence step later', async () => {
    const a = world.instance();
    await a.watches.start(request);
    env.sandbox.failNext({ kind: 'status', status: 503 }, 1000);
    let last: string[] = [];
    for (let i = 0; i < 5 && !last.includes('paused'); i += 1) {
      clock.now += 10 * MINUTE;
      last = await outcomes(a.tick);
    }
    const before = await polled();
    const calls = env.sandbox.requests.length;
    clock.now += 10 * MINUTE;
    expect(await outcomes(a.tick)).toEqual(['paused']);
    expect(env.sandbox.requests).toHaveLength(calls);
    expect(await polled()).toMatchObject({ failures: before.failures, next_poll_at: clock.now + 30_000 });
  });
});

describe('when its key’s budget had no turn for the call in time (a busy instance)', () => {
  it('counts no failure against the invoice: the check is busy, checked again a cadence step later', async () => {
    const a = world.instance();
    await a.watches.start(request);
    const before = await polled();
    a.deps.payments.getInvoice = async () => {
      throw new PacedOutError();
    };
    clock.now += 31_000;
    expect(await outcomes(a.tick)).toEqual(['busy']);
    expect(await polled()).toMatchObject({
      failures: 0,
      snapshot: before.snapshot,
      next_poll_at: clock.now + 30_000,
    });
  });
});

describe('what the log says of a watch that ended without a fresh reading', () => {
  const unread = 'watch ended on time without a fresh reading: the invoice could not be read';

  it('one warning, at the end, however many reads failed before', async () => {
    env.sandbox.updateInvoice(OPEN, { timeout: '2099-01-01T00:00:00.000Z' });
    const a = world.instance({ settings: { maxDays: 1 } });
    await a.watches.start(request);
    env.sandbox.failNext({ kind: 'status', status: 500 }, 10_000);
    for (const at of [31_000, 10 * MINUTE, DAY]) {
      clock.now = NOW.getTime() + at;
      await a.tick();
    }
    expect(await a.watches.list(CHANNEL)).toEqual([]);
    expect(a.logs.lines.filter((l) => l.msg === unread)).toHaveLength(1);
  });

  it('none when the watch ended on a fresh reading', async () => {
    const a = world.instance();
    await a.watches.start(request);
    env.sandbox.updateInvoice(OPEN, { payStatus: 'paid', status: 'closed' });
    clock.now += 31_000;
    expect((await outcomes(a.tick))[0]).toBe('changed');
    expect(await a.watches.list(CHANNEL)).toEqual([]);
    expect(a.logs.lines.filter((l) => l.msg === unread)).toEqual([]);
  });
});
