import { describe, expect, it } from 'vitest';
import { visibleText } from '../support/block-kit.js';
import { NOW } from '../support/factories.js';
import { latest } from '../support/fake-slack.js';
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
  useWatchService,
  world,
} from './watch-service-setup.js';

/** The watch service: ending a watch, and when it wakes the outbox. */

useWatchService();

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
