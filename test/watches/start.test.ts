import { webApi } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { SlackPostError } from '../../src/slack/calls.js';
import type { StartRequest } from '../../src/watches/service.js';
import { PENDING_SETTLE_MS } from '../../src/watches/start.js';
import { visibleText } from '../support/block-kit.js';
import { HOME_TEAM } from '../support/bolt.js';
import { NOW } from '../support/factories.js';
import { latest } from '../support/fake-slack.js';
import { loseNextAnswer, untilPosted, useWatchWorld } from '../support/watch-world.js';

/**
 * Starting a watch when Slack's answer to the card's post is lost: the watch is stored (pending)
 * before the card is posted, found again by the card's metadata, and never left claiming a
 * watch that is not stored, including after the process died mid-post.
 */

const world = useWatchWorld();
const { env, clock } = world;
const OPEN = DEMO_INVOICE_IDS.open;
const CHANNEL = 'C0SUPPORT';

/** One bot instance over the shared store and fake Slack; a new one is a restart. */
const instance = (name: string) => world.instance({ name });

const request: StartRequest = { teamId: HOME_TEAM, channelId: CHANNEL, userId: 'U0WATCHER', invoiceId: OPEN };

const cards = () => world.poster.repliesIn(CHANNEL);
const storedWatches = () => env.store.db.selectFrom('watches').select(['state', 'card_ts']).execute();

describe('a card post whose answer is lost', () => {
  it('when Slack took it: the card is found by its metadata and live, and a retry makes no second card', async () => {
    const a = instance('a');
    loseNextAnswer(world.poster, { lands: true });
    expect(await a.watches.start(request)).toMatchObject({ kind: 'started', inThread: false });
    const [card] = cards();
    expect(await storedWatches()).toEqual([{ state: 'active', card_ts: card?.ts }]);
    expect(await a.watches.start({ ...request, userId: 'U0AGAIN' })).toMatchObject({ kind: 'already' });
    expect(cards()).toHaveLength(1);

    // Part of it paid: it still awaits the rest, so the watch goes on.
    env.sandbox.updateInvoice(OPEN, { payStatus: 'partially_paid' });
    clock.now += 31_000;
    await a.tick();
    expect(world.poster.repliesIn(CHANNEL, card?.ts).map((m) => visibleText(m))).toEqual([
      expect.stringContaining('*Payment*: Not paid → Partially paid'),
    ]);
  });

  it('when it cannot be told whether Slack took it: says so, keeps the watch pending, and a retry posts nothing yet', async () => {
    const a = instance('a');
    loseNextAnswer(world.poster, { lands: false });
    world.poster.failNext(new SlackPostError('transient', 'service_unavailable')); // the look fails too
    expect(await a.watches.start(request)).toMatchObject({ kind: 'unconfirmed' });
    expect(await storedWatches()).toEqual([{ state: 'pending', card_ts: '' }]);
    expect(await a.watches.start(request)).toMatchObject({ kind: 'posting', since: NOW });
    expect(world.poster.calls.filter((c) => c.startsWith('post'))).toHaveLength(1);

    // A retry once a start would have finished: the card is looked for, not there, so a new one is posted.
    clock.now += PENDING_SETTLE_MS;
    expect(await a.watches.start(request)).toMatchObject({ kind: 'started' });
    expect(cards()).toHaveLength(1);
    expect(await storedWatches()).toEqual([{ state: 'active', card_ts: cards()[0]?.ts }]);
  });

  it('when Slack answered with an error (a 500) and the card is not there: nothing is stored, the error goes through', async () => {
    const a = instance('a');
    const cause = new webApi.WebAPIHTTPError(500, 'Internal Server Error', {});
    const failure = new SlackPostError('transient', undefined, undefined, { cause });
    world.poster.failNext(failure);
    await expect(a.watches.start(request)).rejects.toBe(failure);
    expect(world.poster.calls).toEqual([`post ${CHANNEL}`, `find ${CHANNEL}`]);
    expect(await storedWatches()).toEqual([]);
    expect(await a.watches.start(request)).toMatchObject({ kind: 'started' });
    expect(cards()).toHaveLength(1);
  });

  it('when Slack refused it (a 429): nothing is stored, and a retry at once posts the card', async () => {
    const a = instance('a');
    world.poster.failNext(new SlackPostError('rate_limited', 'ratelimited', 1000));
    await expect(a.watches.start(request)).rejects.toMatchObject({ failure: 'rate_limited' });
    expect(await storedWatches()).toEqual([]);
    expect(await env.store.db.selectFrom('watched_invoices').selectAll().execute()).toEqual([]);
    expect(await a.watches.start(request)).toMatchObject({ kind: 'started' });
    expect(cards()).toHaveLength(1);
  });
});

describe('a start killed while its card was being posted (kill -9), on restart', () => {
  it('finds the card Slack took by its metadata: the watch goes live, its card is current, its thread told of changes', async () => {
    loseNextAnswer(world.poster, { lands: true, hang: true });
    void instance('killed').watches.start(request);
    await untilPosted(world.poster);
    expect(await storedWatches()).toEqual([{ state: 'pending', card_ts: '' }]);
    env.sandbox.updateInvoice(OPEN, { payStatus: 'partially_paid' }); // while no one watched

    clock.now += 31_000;
    const restarted = instance('restarted');
    await restarted.tick();
    const [card] = cards();
    if (!card) throw new Error('no card');
    expect(await storedWatches()).toEqual([{ state: 'active', card_ts: card.ts }]);
    expect(visibleText(latest(card))).toContain('Watched since');
    expect(visibleText(latest(card))).toContain('*Payment*\nPartially paid');
    expect(await restarted.watches.list(CHANNEL)).toHaveLength(1);
    // The change made while its start was unfinished is told too.
    expect(world.poster.repliesIn(CHANNEL, card.ts).map((m) => visibleText(m))).toEqual([
      expect.stringContaining('*Payment*: Not paid → Partially paid'),
    ]);

    env.sandbox.updateInvoice(OPEN, { methods: ['BTC'] });
    clock.now += 31_000;
    await restarted.tick();
    expect(world.poster.repliesIn(CHANNEL, card.ts).map((m) => visibleText(m))).toEqual([
      expect.stringContaining('*Payment*: Not paid → Partially paid'),
      expect.stringContaining('*Accepted methods*: USDT-TRC20, USDT-ERC20, BTC, ETH, LTC → BTC'),
    ]);
    expect(cards()).toHaveLength(1);
  });

  it('forgets the watch whose card never reached Slack: nothing claims to be watched, and a new start posts one card', async () => {
    loseNextAnswer(world.poster, { lands: false, hang: true });
    void instance('killed').watches.start(request);
    await untilPosted(world.poster);

    clock.now += 31_000;
    const restarted = instance('restarted');
    env.sandbox.requests.length = 0;
    expect(await restarted.tick()).toEqual([{ outcome: 'ended', invoiceId: OPEN }]);
    expect(env.sandbox.requests).toEqual([]); // nothing left to check
    expect(await storedWatches()).toEqual([]);
    expect(await env.store.db.selectFrom('watched_invoices').selectAll().execute()).toEqual([]);
    expect(world.poster.messages).toEqual([]);
    expect(restarted.logs.lines.map((l) => l.msg)).toContain('settled a watch whose start did not finish');

    expect(await restarted.watches.start(request)).toMatchObject({ kind: 'started' });
    expect(cards()).toHaveLength(1);
  });

  it('leaves a watch whose start may still be under way alone', async () => {
    loseNextAnswer(world.poster, { lands: false, hang: true });
    void instance('slow').watches.start(request);
    await untilPosted(world.poster);
    clock.now += 10_000; // its post's deadline has not passed
    const other = instance('other');
    expect(await other.watches.start(request)).toMatchObject({ kind: 'posting' });
    expect(world.poster.calls.filter((c) => c.startsWith('find'))).toEqual([]);
    expect(await storedWatches()).toEqual([{ state: 'pending', card_ts: '' }]);
  });
});
