import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { SlackPostError } from '../../src/slack/calls.js';
import type { StartRequest } from '../../src/watches/service.js';
import { HOME_TEAM } from '../support/bolt.js';
import { useWatchWorld } from '../support/watch-world.js';

/**
 * A message Slack will never take ends its watch only when the watch can no longer be told
 * anything (its card deleted, its channel closed to the bot), and only once.
 */

const world = useWatchWorld();
const { env, clock } = world;
const OPEN = DEMO_INVOICE_IDS.open;
const CHANNEL = 'C0SUPPORT';
const ENDED_LOG = 'watch ended: Slack will not take its messages';

const request: StartRequest = { teamId: HOME_TEAM, channelId: CHANNEL, userId: 'U0WATCHER', invoiceId: OPEN };

describe('a message Slack will not take', () => {
  it('refused for what it says (invalid blocks): that message is dropped, and the watch goes on', async () => {
    const a = world.instance();
    await a.watches.start(request);
    env.sandbox.updateInvoice(OPEN, { payStatus: 'partially_paid' });
    world.poster.failNext(new SlackPostError('refused', 'invalid_blocks'));
    clock.now += 31_000;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['changed', 'dropped', 'sent']);
    expect(await a.watches.list(CHANNEL)).toHaveLength(1);
    expect(a.logs.lines.map((l) => l.msg)).not.toContain(ENDED_LOG);
  });

  it('to the deleted card of a watch already stopped: nothing more ends, and the outbox is not woken again', async () => {
    let wakes = 0;
    const a = world.instance({ wakeOutbox: () => (wakes += 1) });
    await a.watches.start(request);
    expect(await a.watches.stopInvoice(CHANNEL, OPEN, 'U0STOPPER')).toMatchObject({ kind: 'stopped' });
    const [card] = world.poster.repliesIn(CHANNEL);
    if (card) card.deleted = true;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['dropped', 'sent']);
    expect(wakes).toBe(1);
    expect(a.logs.lines.map((l) => l.msg)).not.toContain(ENDED_LOG);
  });
});

describe('a watch whose invoice was never read', () => {
  it('is listed by its invoice id, and a Stop names it by that id', async () => {
    const a = world.instance();
    await a.watches.start(request);
    await env.store.db.deleteFrom('watched_invoices').execute();
    expect(await a.watches.list(CHANNEL)).toMatchObject([
      { invoiceId: OPEN, title: undefined, status: undefined, payStatus: undefined },
    ]);
    expect(await a.watches.stopInvoice(CHANNEL, OPEN, 'U0STOPPER')).toEqual({ kind: 'stopped', title: OPEN });
  });
});
