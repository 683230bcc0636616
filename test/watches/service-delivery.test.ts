import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { SlackPostError } from '../../src/slack/calls.js';
import { visibleText } from '../support/block-kit.js';
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

/** The watch service's delivery: exactly once across crashes and instances, the outbox, a public channel not joined. */

useWatchService();

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
