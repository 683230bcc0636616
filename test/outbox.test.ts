import { describe, expect, it } from 'vitest';
import {
  ATTEMPT_WINDOW_MS,
  CLOCK_TOLERANCE_MS,
  type enqueue,
  KEEP_DONE_MS,
  MAX_BACKOFF_MS,
  type OutboxRow,
  outboxBacklog,
  PRUNE_DONE_EVERY_MS,
  RETRY_FOR_MS,
} from '../src/outbox.js';
import { SlackPostError } from '../src/slack/calls.js';
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
const job = (owner = 'a', extra: Omit<NonNullable<Parameters<typeof outboxJob>[1]>, 'owner'> = {}) =>
  outboxJob(world, { owner, ...extra });

/** Marks every waiting message as attempted at `at`, its answer lost: the next attempt looks for it first. */
const attemptedAt = (at: number) => world.store.db.updateTable('outbox').set({ attempted_at: at }).execute();

/** Slack will not let the bot look: `find` fails as conversations.history/replies does there. */
const cannotLook = (code: string) => {
  world.poster.find = async ({ channel }) => {
    world.poster.calls.push(`find ${channel}`);
    throw new SlackPostError('not_in_channel', code);
  };
};

const rows = () => outboxRows(world);
const put = (entries: Parameters<typeof enqueue>[1]) => decide(world, entries);
const runOnce = (outbox: ReturnType<typeof job>['outbox']) => runOutboxOnce(world, outbox);

describe('the outbox', () => {
  it('is named, runs four at once, and says when each message is due', async () => {
    const { outbox } = job();
    expect([outbox.name, outbox.concurrency]).toEqual(['outbox', 4]);
    await put([{ channel: 'C1', message }]);
    const [row] = await outbox.claim(world.clock.now, 1);
    expect(row && outbox.dueAt(row)).toBe(T0);
  });

  it('posts in a thread and edits a message by its ts', async () => {
    const { outbox } = job();
    const ts = await world.poster.post({ channel: 'C1', ...message });
    await put([
      { channel: 'C1', threadTs: ts, message },
      { channel: 'C1', ts, message: { ...message, text: 'Edited' } },
    ]);
    expect(await runOnce(outbox)).toEqual({ outcome: 'sent' });
    expect(await runOnce(outbox)).toEqual({ outcome: 'sent' });
    expect(world.poster.repliesIn('C1', ts)).toHaveLength(1);
    expect(world.poster.messages[0]?.edits.map((e) => e.text)).toEqual(['Edited']);
    expect((await rows()).map((r) => [r.result, r.done_at])).toEqual([
      ['sent', T0],
      ['sent', T0],
    ]);
  });

  it('finds a post an earlier attempt made before a crash, and does not post it again', async () => {
    const { outbox } = job('a', { leaseMs: 1000 });
    await put([{ channel: 'C1', message }]);
    const [row] = await outbox.claim(world.clock.now, 1);
    // The first instance marks the attempt and posts, then dies before recording it.
    await world.store.db.updateTable('outbox').set({ attempted_at: world.clock.now }).execute();
    await world.poster.post({ channel: 'C1', ...message, messageId: `outbox-${row?.id}` });
    world.clock.now += 2000;
    const { outbox: b } = job('b');
    expect(await runOnce(b)).toEqual({ outcome: 'found' });
    expect(world.poster.messages).toHaveLength(1);
    expect((await rows())[0]?.result).toBe('found');
  });

  it('posts again when Slack will not say whether an earlier attempt went out, and says so', async () => {
    const { outbox, logs } = job();
    await put([{ channel: 'C1', message }]);
    await world.store.db
      .updateTable('outbox')
      .set({ attempted_at: T0 - 1000 })
      .execute();
    world.poster.failNext(new SlackPostError('refused', 'missing_scope'));
    expect(await runOnce(outbox)).toEqual({ outcome: 'sent' });
    expect(world.poster.messages).toHaveLength(1);
    expect(
      logs.lines.find((l) => l.msg === 'could not look for an earlier attempt; posting again'),
    ).toMatchObject({
      level: 'warn',
      channel: 'C1',
    });
  });

  it('retries later when looking for an earlier attempt fails for a while', async () => {
    const { outbox } = job();
    await put([{ channel: 'C1', message }]);
    await world.store.db
      .updateTable('outbox')
      .set({ attempted_at: T0 - 1000 })
      .execute();
    world.poster.failNext(new SlackPostError('transient', undefined));
    expect(await runOnce(outbox)).toEqual({ outcome: 'retry_later' });
    expect(world.poster.messages).toHaveLength(0);
  });

  it('posts nothing once another instance has taken its lease', async () => {
    const { outbox } = job('a', { leaseMs: 1000 });
    await put([{ channel: 'C1', message }]);
    const [stale] = await outbox.claim(world.clock.now, 1);
    world.clock.now += 2000;
    const { outbox: b } = job('b');
    const [fresh] = await b.claim(world.clock.now, 1);
    expect(stale && (await outbox.run(stale))).toEqual({ outcome: 'lease_lost' });
    expect(fresh && (await b.run(fresh))).toEqual({ outcome: 'sent' });
    expect(world.poster.messages).toHaveLength(1);
  });

  it('waits as long as Slack asks after a 429, and backs off after an outage', async () => {
    const { outbox } = job();
    await put([{ channel: 'C1', message }]);
    world.poster.failNext(new SlackPostError('rate_limited', 'ratelimited', 7000));
    expect(await runOnce(outbox)).toEqual({ outcome: 'retry_later' });
    expect((await rows())[0]).toMatchObject({ next_attempt_at: T0 + 7000, attempts: 1, lease_owner: null });
    world.clock.now += 7000;
    world.poster.failNext(new SlackPostError('transient', undefined));
    expect(await runOnce(outbox)).toEqual({ outcome: 'retry_later' });
    expect((await rows())[0]).toMatchObject({ next_attempt_at: world.clock.now + 4000, attempts: 2 });
  });

  it('backs off when Slack says to slow down without saying how long (chat.postMessage’s rate_limited)', async () => {
    const { outbox, dropped } = job();
    await put([{ channel: 'C1', message }]);
    for (const wait of [2000, 4000, 8000]) {
      world.poster.failNext(new SlackPostError('rate_limited', 'rate_limited'));
      expect(await runOnce(outbox)).toEqual({ outcome: 'retry_later' });
      const [row] = await rows();
      expect(row).toMatchObject({ next_attempt_at: world.clock.now + wait, attempted_at: null });
      world.clock.now += wait;
    }
    expect(await runOnce(outbox)).toEqual({ outcome: 'sent' });
    expect(world.poster.calls).toEqual(['post C1', 'post C1', 'post C1', 'post C1']);
    expect(dropped).toEqual([]);
  });

  it('keeps trying through a day of Slack failing, never waiting more than five minutes between tries', async () => {
    const { outbox, dropped } = job();
    await put([{ channel: 'C1', message }]);
    const gaps: number[] = [];
    while (world.clock.now - T0 < RETRY_FOR_MS - MAX_BACKOFF_MS) {
      world.poster.failNext(new SlackPostError('transient', undefined));
      expect(await runOnce(outbox)).toEqual({ outcome: 'retry_later' });
      const [row] = await rows();
      gaps.push((row?.next_attempt_at ?? 0) - world.clock.now);
      world.clock.now = row?.next_attempt_at ?? 0;
    }
    expect(gaps.slice(0, 4)).toEqual([2000, 4000, 8000, 16_000]);
    expect(Math.max(...gaps)).toBe(MAX_BACKOFF_MS);
    expect(gaps.length).toBeGreaterThan(250);
    expect(await runOnce(outbox)).toEqual({ outcome: 'sent' });
    expect(world.poster.messages).toHaveLength(1);
    expect(dropped).toEqual([]);
  });

  it('gives up a day after the message was decided, logged and counted', async () => {
    const { outbox, logs, dropped } = job();
    await put([{ channel: 'C1', message }]);
    world.clock.now += RETRY_FOR_MS - 1;
    world.poster.failNext(new SlackPostError('transient', undefined));
    expect(await runOnce(outbox)).toEqual({ outcome: 'retry_later' });
    world.clock.now += MAX_BACKOFF_MS;
    world.poster.failNext(new SlackPostError('transient', 'internal_error'));
    expect(await runOnce(outbox)).toEqual({ outcome: 'dropped' });
    expect((await rows())[0]?.result).toBe('dropped: internal_error');
    expect(dropped).toEqual(['gave_up']);
    expect(logs.lines.find((l) => l.msg === 'gave up on a message to Slack')).toMatchObject({
      level: 'warn',
      reason: 'gave_up',
      attempts: 2,
      waitedMinutes: 24 * 60 + 5,
    });
  });

  it('drops at once a message Slack will never take, telling its watch, logged and counted by why', async () => {
    const undeliverable: OutboxRow[] = [];
    const { outbox, logs, dropped } = job('a', { undeliverable });
    await put([
      { channel: 'C1', message },
      { channel: 'C2', ts: '1.000001', message },
      { channel: 'C3', message },
    ]);
    world.poster.failNext(new SlackPostError('not_in_channel', 'is_archived'));
    expect(await runOnce(outbox)).toEqual({ outcome: 'dropped' });
    world.poster.failNext(new SlackPostError('message_not_found', 'message_not_found'));
    expect(await runOnce(outbox)).toEqual({ outcome: 'dropped' });
    world.poster.failNext(new SlackPostError('refused', 'token_revoked'));
    expect(await runOnce(outbox)).toEqual({ outcome: 'dropped' });
    expect(undeliverable.map((r) => r.channel)).toEqual(['C1', 'C2', 'C3']);
    expect((await rows()).map((r) => r.result)).toEqual([
      'dropped: is_archived',
      'dropped: message_not_found',
      'dropped: token_revoked',
    ]);
    expect(dropped).toEqual(['not_in_channel', 'message_not_found', 'refused']);
    expect(logs.lines.filter((l) => l.msg === 'gave up on a message to Slack').map((l) => l.method)).toEqual([
      'chat.postMessage',
      'chat.update',
      'chat.postMessage',
    ]);
    expect(world.poster.messages).toEqual([]);
  });

  it('counts a message it may no longer deliver (the feed ended) as not allowed', async () => {
    const { outbox, dropped } = job('a', { mayDeliver: async () => false });
    await put([{ channel: 'C1', message }]);
    expect(await runOnce(outbox)).toEqual({ outcome: 'dropped' });
    expect(dropped).toEqual(['not_allowed']);
    expect(world.poster.calls).toEqual([]);
  });

  it('says how many messages wait, all instances together, and since when the oldest', async () => {
    expect(await outboxBacklog(world.store)).toEqual({ pending: 0, oldestAt: undefined });
    const { outbox } = job();
    await put([{ channel: 'C1', message }]);
    world.clock.now += 60_000;
    await put([
      { channel: 'C1', message },
      { channel: 'C2', message },
    ]);
    expect(await outboxBacklog(world.store)).toEqual({ pending: 3, oldestAt: T0 });
    await runOnce(outbox);
    expect(await outboxBacklog(world.store)).toEqual({ pending: 2, oldestAt: T0 + 60_000 });
  });

  describe('after a post whose answer was lost', () => {
    it('looks for it only in the minutes around that attempt, allowing for either world.clock to be ahead', async () => {
      const { outbox } = job();
      await put([{ channel: 'C1', threadTs: '1.000001', message }]);
      await attemptedAt(T0 - 1000);
      const asked: unknown[] = [];
      const find = world.poster.find;
      world.poster.find = async (where) => {
        asked.push(where);
        return find(where);
      };
      world.clock.now += 3 * 3_600_000;
      expect(await runOnce(outbox)).toEqual({ outcome: 'sent' });
      expect(asked).toEqual([
        expect.objectContaining({
          channel: 'C1',
          threadTs: '1.000001',
          oldest: T0 - 1000 - CLOCK_TOLERANCE_MS,
          latest: T0 - 1000 + ATTEMPT_WINDOW_MS,
        }),
      ]);
    });

    it.each([
      ['a public channel the bot has not joined', 'C0PUBLIC', 'not_in_channel'],
      ['a direct message addressed by user id', 'U0SUBSCRIBER', 'channel_not_found'],
    ])('posts again where Slack will not let it look: %s (%s)', async (_where, channel, code) => {
      const undeliverable: OutboxRow[] = [];
      const { outbox, logs, dropped } = job('a', { undeliverable });
      await put([{ channel, message }]);
      await attemptedAt(T0 - 1000);
      cannotLook(code);
      expect(await runOnce(outbox)).toEqual({ outcome: 'sent' });
      expect(world.poster.calls).toEqual([`find ${channel}`, `post ${channel}`]);
      expect(undeliverable).toEqual([]);
      expect(dropped).toEqual([]);
      expect(
        logs.lines.find((l) => l.msg === 'could not look for an earlier attempt; posting again'),
      ).toMatchObject({ level: 'warn', channel });
    });

    it('drops it, telling its watch, when the thread it replies to was deleted', async () => {
      const undeliverable: OutboxRow[] = [];
      const { outbox, dropped } = job('a', { undeliverable });
      await put([{ channel: 'C1', threadTs: '1.000001', message }]);
      await attemptedAt(T0 - 1000);
      world.poster.failNext(new SlackPostError('message_not_found', 'thread_not_found'));
      expect(await runOnce(outbox)).toEqual({ outcome: 'dropped' });
      expect(undeliverable).toHaveLength(1);
      expect(dropped).toEqual(['message_not_found']);
      expect(world.poster.messages).toEqual([]);
    });
  });

  it('after a 429 has nothing to look for: Slack took nothing, so it simply posts again', async () => {
    const { outbox } = job();
    await put([{ channel: 'C0PUBLIC', threadTs: '1.000001', message }]);
    cannotLook('not_in_channel');
    world.poster.failNext(new SlackPostError('rate_limited', 'ratelimited', 1000));
    expect(await runOnce(outbox)).toEqual({ outcome: 'retry_later' });
    expect((await rows())[0]?.attempted_at).toBeNull();
    world.clock.now += 1000;
    expect(await runOnce(outbox)).toEqual({ outcome: 'sent' });
    expect(world.poster.calls).toEqual(['post C0PUBLIC thread 1.000001', 'post C0PUBLIC thread 1.000001']);
  });

  it('after a time-out remembers the attempt, and looks for it before posting again', async () => {
    const { outbox } = job();
    await put([{ channel: 'C1', message }]);
    world.poster.failNext(new SlackPostError('transient', undefined));
    expect(await runOnce(outbox)).toEqual({ outcome: 'retry_later' });
    expect((await rows())[0]?.attempted_at).toBe(T0);
    world.clock.now += 2000;
    expect(await runOnce(outbox)).toEqual({ outcome: 'sent' });
    expect(world.poster.calls).toEqual(['post C1', 'find C1', 'post C1']);
  });

  it('forgets delivered messages a day later, looking for them once a minute', async () => {
    const { outbox } = job();
    await put([{ channel: 'C1', message }]);
    await runOnce(outbox);
    world.clock.now += KEEP_DONE_MS;
    await outbox.claim(world.clock.now, 1);
    expect(await rows()).toHaveLength(1);
    world.clock.now += PRUNE_DONE_EVERY_MS - 1;
    await outbox.claim(world.clock.now, 1);
    expect(await rows()).toHaveLength(1);
    world.clock.now += 1;
    await outbox.claim(world.clock.now, 1);
    expect(await rows()).toEqual([]);
  });

  it('looks for delivered messages to forget at once after the clock went back', async () => {
    const { outbox } = job();
    const deliveredAt = world.clock.now;
    // A claim with the clock 10 minutes ahead, before anything was delivered.
    await outbox.claim(deliveredAt + KEEP_DONE_MS + 10 * 60_000, 1);
    await put([{ channel: 'C1', message }]);
    await runOnce(outbox);
    await outbox.claim(deliveredAt + KEEP_DONE_MS + 1, 1);
    expect(await rows()).toEqual([]);
  });

  it('lets a bug through', async () => {
    await put([{ channel: 'C1', message }]);
    const broken = { ...world.poster, post: async () => Promise.reject(new TypeError('a bug')) };
    const { outbox: bugged } = job('a', { posterOf: async () => broken });
    const [row] = await bugged.claim(world.clock.now, 1);
    await expect(row && bugged.run(row)).rejects.toThrow('a bug');
  });
});
