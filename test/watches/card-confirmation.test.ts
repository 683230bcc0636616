import { webApi } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { SlackPostError } from '../../src/slack/calls.js';
import { visibleText } from '../support/block-kit.js';
import { latest } from '../support/fake-slack.js';
import { loseNextAnswer, untilPosted, useWatchWorld, watchRequest } from '../support/watch-world.js';

/**
 * Whether a new watch's card is in Slack, as the start and whoever settles the watch later find
 * out: a card is confirmed only as its own watch's, a watch is dropped only when its card is
 * known not to be there, and a card left claiming a watch that is not stored is deleted.
 */

const world = useWatchWorld();
const { env, clock } = world;
const { open: OPEN, paid: PAID } = DEMO_INVOICE_IDS;
const CHANNEL = 'C0SUPPORT';

const request = watchRequest;

const storedWatches = () =>
  env.store.db.selectFrom('watches').select(['id', 'channel_id', 'invoice_id', 'state', 'card_ts']).execute();
const cardsIn = (channel = CHANNEL) => world.poster.repliesIn(channel);
/** Slack answered the post with a 500: its part is over, whatever it did. */
const answered500 = () =>
  new SlackPostError('transient', undefined, undefined, {
    cause: new webApi.WebAPIHTTPError(500, 'Internal Server Error', {}),
  });

describe('a start whose card post failed', () => {
  it('takes no other watch’s card for its own: unconfirmed, kept pending, and a warning names it', async () => {
    env.sandbox.updateInvoice(PAID, {
      status: 'open',
      payStatus: 'none',
      timeout: '2099-01-01T00:00:00.000Z',
    });
    const a = world.instance();
    await a.watches.start(request({ invoiceId: PAID }));
    loseNextAnswer(world.poster, { lands: false });
    expect(await a.watches.start(request())).toMatchObject({ kind: 'unconfirmed' });
    const pending = (await storedWatches()).find((w) => w.invoice_id === OPEN);
    expect(pending).toMatchObject({ state: 'pending', card_ts: '' });
    expect(a.logs.lines.find((l) => l.msg === 'a live card was not confirmed')).toMatchObject({
      level: 'warn',
      watch: pending?.id,
      channel: CHANNEL,
    });
  });

  it('when Slack answered with an error but took the card: the card is found, and the watch is live', async () => {
    const a = world.instance();
    const post = world.poster.post;
    world.poster.post = async (message) => {
      world.poster.post = post;
      await post(message);
      throw answered500();
    };
    expect(await a.watches.start(request())).toMatchObject({ kind: 'started' });
    expect(await storedWatches()).toMatchObject([{ state: 'active', card_ts: cardsIn()[0]?.ts }]);
  });

  it('when Slack answered with an error and the look for the card fails too: unconfirmed, kept pending', async () => {
    const a = world.instance();
    world.poster.failNext(answered500());
    world.poster.failNext(new SlackPostError('transient', 'service_unavailable'));
    expect(await a.watches.start(request())).toMatchObject({ kind: 'unconfirmed' });
    expect(await storedWatches()).toMatchObject([{ state: 'pending', card_ts: '' }]);
  });

  it('lets a failure that is not Slack’s through, from the post or from the look, and makes nothing up', async () => {
    const a = world.instance();
    const bug = new TypeError('a bug');
    world.poster.post = async () => {
      throw bug;
    };
    await expect(a.watches.start(request())).rejects.toBe(bug);
    expect(world.poster.calls.filter((c) => c.startsWith('find'))).toEqual([]);

    const b = world.instance();
    loseNextAnswer(world.poster, { lands: false });
    world.poster.find = async () => {
      throw bug;
    };
    await expect(b.watches.start(request({ channelId: 'C0OTHER' }))).rejects.toBe(bug);
  });
});

describe('a start that meets a watch already there', () => {
  it('says it is already watched, even when the channel is at its limit', async () => {
    const a = world.instance({ settings: { limitPerChannel: 1 } });
    await a.watches.start(request());
    expect(await a.watches.start(request({ userId: 'U0OTHER' }))).toMatchObject({ kind: 'already' });
  });

  it('starts a new watch, with a new card, after the last one was stopped', async () => {
    const a = world.instance();
    await a.watches.start(request());
    await a.watches.stopInvoice(CHANNEL, OPEN, 'U0STOPPER');
    expect(await a.watches.start(request())).toMatchObject({ kind: 'started' });
    expect(cardsIn()).toHaveLength(2);
    expect(await a.watches.list(CHANNEL)).toHaveLength(1);
  });

  it('lets the store’s failure through when the watch cannot be stored, posting nothing', async () => {
    const failure = new Error('disk I/O error');
    const store = { ...env.store, transaction: () => Promise.reject(failure) };
    const a = world.instance({ store });
    await expect(a.watches.start(request())).rejects.toBe(failure);
    expect(world.poster.calls).toEqual([]);
  });
});

describe('a card post slower than a start takes, settled by another instance meanwhile', () => {
  /** The card's post takes over 30 s: meanwhile another instance's check settles the pending watch. */
  function slowPost({ landsFirst }: { landsFirst: boolean }) {
    const other = world.instance({ name: 'other' });
    const post = world.poster.post;
    world.poster.post = async (message) => {
      world.poster.post = post;
      const ts = landsFirst ? await post(message) : undefined;
      clock.now += 31_000;
      await other.tick();
      return ts ?? post(message);
    };
    return other;
  }

  it('when the other dropped the watch (its card was not there yet): the card is deleted and the start fails', async () => {
    const a = world.instance();
    slowPost({ landsFirst: false });
    await expect(a.watches.start(request())).rejects.toThrow(
      'the watch was dropped while its card was posted',
    );
    expect(await storedWatches()).toEqual([]);
    expect(cardsIn()).toEqual([]);
    expect(world.poster.calls.filter((c) => c.startsWith('delete'))).toHaveLength(1);
  });

  it('when that card cannot be deleted either: a warning names the watch, and the start still fails', async () => {
    const a = world.instance();
    slowPost({ landsFirst: false });
    world.poster.remove = async () => {
      throw new SlackPostError('transient', undefined);
    };
    await expect(a.watches.start(request())).rejects.toThrow(
      'the watch was dropped while its card was posted',
    );
    expect(a.logs.lines.find((l) => l.msg === 'could not delete the card of a dropped watch')).toMatchObject({
      level: 'warn',
      channel: CHANNEL,
      watch: expect.any(String),
    });
  });

  it('when the other found the card and made the watch live: the start reports it started, and the card stays', async () => {
    const a = world.instance();
    slowPost({ landsFirst: true });
    expect(await a.watches.start(request())).toMatchObject({ kind: 'started' });
    expect(cardsIn()).toHaveLength(1);
    expect(await storedWatches()).toMatchObject([{ state: 'active', card_ts: cardsIn()[0]?.ts }]);
    expect(world.poster.calls.filter((c) => c.startsWith('delete'))).toEqual([]);
  });
});

describe('a watch left pending by a start that never finished', () => {
  /** A start killed while its card was posted (kill -9): its card landed when `lands`. */
  async function killedStart(lands: boolean, channelId = CHANNEL) {
    loseNextAnswer(world.poster, { lands, hang: true });
    void world.instance({ name: 'killed' }).watches.start(request({ channelId }));
    await untilPosted(world.poster, channelId);
  }

  it('is left alone by a check while its start may still be under way', async () => {
    const a = world.instance();
    await a.watches.start(request({ channelId: 'C0FINANCE' }));
    clock.now += 20_000;
    await killedStart(false);
    clock.now += 11_000; // the live watch's check is due; the start began 11 s ago
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['unchanged']);
    expect(world.poster.calls.filter((c) => c.startsWith('find'))).toEqual([]);
    expect((await storedWatches()).map((w) => w.state).sort()).toEqual(['active', 'pending']);
  });

  it('not found by a check: dropped, and the invoice still checked for the watches that go on', async () => {
    const a = world.instance();
    await a.watches.start(request({ channelId: 'C0FINANCE' }));
    await killedStart(false);
    clock.now += 31_000;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['unchanged']);
    expect(await storedWatches()).toMatchObject([{ channel_id: 'C0FINANCE', state: 'active' }]);
  });

  it('found by a later start in its channel: live, its card brought up to the invoice as last read', async () => {
    let wakes = 0;
    const a = world.instance({ wakeOutbox: () => (wakes += 1) });
    await a.watches.start(request({ channelId: 'C0FINANCE' }));
    clock.now += 20_000;
    await killedStart(true);
    env.sandbox.updateInvoice(OPEN, { payStatus: 'partially_paid' });
    clock.now += 11_000;
    await a.tick(); // the live watch sees the change; the pending one is not settled yet
    clock.now += 20_000;
    wakes = 0;
    expect(await a.watches.start(request())).toMatchObject({ kind: 'already' });
    expect(wakes).toBe(1);
    await a.tick();
    const [card] = cardsIn();
    if (!card) throw new Error('no card');
    expect(visibleText(latest(card))).toContain('*Payment*\nPartially paid');
    expect(a.logs.lines.find((l) => l.msg === 'settled a watch whose start did not finish')).toMatchObject({
      found: true,
    });
  });

  it('stays pending while Slack is too busy to look, and the check goes on; settled once Slack answers', async () => {
    await killedStart(false);
    clock.now += 31_000;
    const a = world.instance({ name: 'restarted' });
    world.poster.failNext(new SlackPostError('rate_limited', 'ratelimited', 1000));
    env.sandbox.requests.length = 0;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['unchanged']);
    expect(env.sandbox.requests).toHaveLength(1);
    expect(await storedWatches()).toMatchObject([{ state: 'pending' }]);

    clock.now += 30_000;
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['ended']);
    expect(await storedWatches()).toEqual([]);
    expect(a.logs.lines.find((l) => l.msg === 'settled a watch whose start did not finish')).toMatchObject({
      found: false,
    });
  });

  it('is dropped with a warning where Slack will not let the bot look', async () => {
    await killedStart(false);
    const [pending] = await storedWatches();
    clock.now += 31_000;
    const a = world.instance({ name: 'restarted' });
    world.poster.failNext(new SlackPostError('not_in_channel', 'not_in_channel'));
    expect((await a.tick()).map((r) => r.outcome)).toEqual(['ended']);
    expect(await storedWatches()).toEqual([]);
    expect(
      a.logs.lines.find(
        (l) =>
          l.msg === 'could not look for the card of a watch whose start did not finish: the watch is dropped',
      ),
    ).toMatchObject({ level: 'warn', watch: pending?.id, channel: CHANNEL });
  });

  it('is kept, and the failure goes through, when the look fails for a reason that is not Slack’s', async () => {
    await killedStart(false);
    clock.now += 31_000;
    const a = world.instance({ name: 'restarted' });
    const bug = new TypeError('a bug');
    world.poster.find = async () => {
      throw bug;
    };
    await expect(a.tick()).rejects.toBe(bug);
    expect(await storedWatches()).toMatchObject([{ state: 'pending' }]);
  });
});
