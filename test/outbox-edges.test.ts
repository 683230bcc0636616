import { describe, expect, it } from 'vitest';
import { type enqueue, MAX_BACKOFF_MS, outboxBacklog, RETRY_FOR_MS } from '../src/outbox.js';
import { UNSERVED_RETRY_MS } from '../src/scheduler.js';
import { SlackPostError } from '../src/slack/calls.js';
import { type InstallationId, installationId } from '../src/store/keys.js';
import {
  decide,
  message,
  outboxJob,
  outboxRows,
  runOutboxOnce,
  T0,
  useOutboxWorld,
} from './support/outbox-world.js';

const world = useOutboxWorld();
const job = (extra: Parameters<typeof outboxJob>[1] = {}) => outboxJob(world, extra);

const rows = () => outboxRows(world);
const put = (entries: Parameters<typeof enqueue>[1], installation?: InstallationId) =>
  decide(world, entries, installation);
const runOnce = (outbox: ReturnType<typeof job>['outbox']) => runOutboxOnce(world, outbox);

describe('the outbox, at the edges', () => {
  it('gives up on a message exactly a day after it was decided', async () => {
    const { outbox, dropped } = job();
    await put([{ channel: 'C1', message }]);
    world.clock.now = T0 + RETRY_FOR_MS;
    world.poster.failNext(new SlackPostError('transient', 'internal_error'));
    expect(await runOnce(outbox)).toEqual({ outcome: 'dropped' });
    expect(dropped).toEqual(['gave_up']);
    expect((await rows())[0]?.result).toBe('dropped: internal_error');
  });

  it('gives up a day after it was decided on a message Slack keeps asking to wait, like any other', async () => {
    const { outbox, dropped } = job();
    await put([{ channel: 'C1', message }]);
    world.poster.failNext(new SlackPostError('rate_limited', 'ratelimited', 60_000));
    expect(await runOnce(outbox)).toEqual({ outcome: 'retry_later' });
    world.clock.now = T0 + RETRY_FOR_MS;
    world.poster.failNext(new SlackPostError('rate_limited', 'ratelimited', 60_000));
    expect(await runOnce(outbox)).toEqual({ outcome: 'dropped' });
    expect(dropped).toEqual(['gave_up']);
  });

  it('keeps a watch’s messages, a feed’s and a channel’s notices in lanes of their own, each in order', async () => {
    const { outbox } = job();
    const entries = [
      { channel: 'C1', message: { ...message, text: 'feed 1' }, subscriptionId: 's-1' },
      { channel: 'C1', message: { ...message, text: 'card edit' }, ts: '1.000001', watchId: 'w-1' },
      { channel: 'C1', message: { ...message, text: 'notice' } },
      { channel: 'C1', message: { ...message, text: 'feed 2' }, subscriptionId: 's-1' },
      { channel: 'C1', message: { ...message, text: 'reply' }, threadTs: '1.000001', watchId: 'w-1' },
      { channel: 'C1', message: { ...message, text: 'other watch' }, threadTs: '1.000009', watchId: 'w-2' },
    ];
    await put(entries);
    expect((await rows()).map((r) => r.lane)).toEqual([
      'C1/feed',
      'C1/watch/w-1',
      'C1',
      'C1/feed',
      'C1/watch/w-1',
      'C1/watch/w-2',
    ]);
    // The head of each lane only: the second of a feed or of a watch waits for the first.
    const heads = await outbox.claim(world.clock.now, 10);
    expect(heads.map((r) => JSON.parse(r.message).text).sort()).toEqual([
      'card edit',
      'feed 1',
      'notice',
      'other watch',
    ]);
  });

  it('records why a message it may no longer deliver was dropped', async () => {
    const { outbox, dropped } = job({ mayDeliver: async () => false });
    await put([{ channel: 'C1', message }]);
    expect(await runOnce(outbox)).toEqual({ outcome: 'dropped' });
    expect(dropped).toEqual(['not_allowed']);
    expect((await rows())[0]).toMatchObject({ result: 'dropped: not allowed here any more', done_at: T0 });
  });

  it('gives back a message whose installation cannot be served now, counting no attempt', async () => {
    const { outbox } = job({ posterOf: async () => undefined });
    await put([{ channel: 'C1', message }]);
    world.clock.now = T0 + 5_000;
    expect(await runOnce(outbox)).toMatchObject({ outcome: 'paused' });
    expect((await rows())[0]).toMatchObject({
      next_attempt_at: T0 + 5_000 + UNSERVED_RETRY_MS,
      attempts: 0,
      lease_owner: null,
      done_at: null,
    });
    expect(await outbox.claim(world.clock.now, 1)).toEqual([]);
  });

  it('drops a message whose installation could not be served for a day, instead of posting it days late', async () => {
    const { outbox, dropped, logs } = job({ posterOf: async () => undefined });
    await put([{ channel: 'C1', message }]);
    world.clock.now = T0 + RETRY_FOR_MS - 1;
    expect(await runOnce(outbox)).toMatchObject({ outcome: 'paused' });
    expect(dropped).toEqual([]);
    world.clock.now = T0 + RETRY_FOR_MS + UNSERVED_RETRY_MS;
    expect(await runOnce(outbox)).toMatchObject({ outcome: 'paused' });
    expect(dropped).toEqual(['gave_up']);
    expect((await rows())[0]).toMatchObject({ result: 'dropped: its workspace could not be served' });
    expect(logs.lines.map((l) => l.msg)).toContain(
      'gave up on a message to Slack: its workspace could not be served',
    );
    expect(await outbox.claim(world.clock.now + MAX_BACKOFF_MS, 1)).toEqual([]);
  });

  it('names the channel of a message in what it says of it, and its installation when there are many', async () => {
    const { outbox } = job();
    await put([{ channel: 'C1', message }]);
    await put([{ channel: 'C2', message }], installationId('T0OTHER'));
    const claimed = await outbox.claim(world.clock.now, 2);
    expect(claimed.map((row) => outbox.describe?.(row))).toEqual([
      { channel: 'C1' },
      { installation: 'T0OTHER', channel: 'C2' },
    ]);
  });

  it('says how many messages wait for one installation, and since when', async () => {
    await put([{ channel: 'C1', message }], installationId('T0ONE'));
    world.clock.now += 60_000;
    await put(
      [
        { channel: 'C1', message },
        { channel: 'C2', message },
      ],
      installationId('T0TWO'),
    );
    expect(await outboxBacklog(world.store, installationId('T0TWO'))).toEqual({
      pending: 2,
      oldestAt: T0 + 60_000,
    });
    expect(await outboxBacklog(world.store, installationId('T0ONE'))).toEqual({ pending: 1, oldestAt: T0 });
    expect(await outboxBacklog(world.store, installationId('T0NONE'))).toEqual({
      pending: 0,
      oldestAt: undefined,
    });
    expect(await outboxBacklog(world.store)).toEqual({ pending: 3, oldestAt: T0 });
  });
});
