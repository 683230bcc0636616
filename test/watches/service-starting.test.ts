import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { SlackPostError } from '../../src/slack/calls.js';
import { checkClaims } from '../../src/watches/queries-checks.js';
import { visibleText } from '../support/block-kit.js';
import { HOME_TEAM } from '../support/bolt.js';
import { NOW } from '../support/factories.js';
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

/** The watch service: starting a watch, and watches in detail (races, listing, closed channels, stopping). */

useWatchService();

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
