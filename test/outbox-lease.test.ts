import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Inflight } from '../src/inflight.js';
import type { OutboxRow } from '../src/outbox.js';
import { createScheduler, type Job } from '../src/scheduler.js';
import { captureLogs } from './support/bolt.js';
import { decide, message, outboxJob, outboxRows, useOutboxWorld } from './support/outbox-world.js';

/**
 * A send that outlives its lease (a slow Slack: the channel check, the history pages, the post,
 * each up to 10 s, against a 30 s lease), run by the scheduler as the bot runs it, with the lease
 * shortened to LEASE_MS and Slack's slowness to SLOW_MS.
 */

const world = useOutboxWorld();
const LEASE_MS = 300;
const SLOW_MS = 1_200;

/** Runs the outbox under the scheduler, as the bot does, until `done` holds; then stops it. */
async function delivering(outbox: Job<OutboxRow>, done: () => boolean | Promise<boolean>) {
  const scheduler = createScheduler(
    { logger: captureLogs().logger, inflight: new Inflight(), clock: Date.now },
    [outbox],
  );
  scheduler.start();
  try {
    await expect.poll(done, { timeout: 10_000, interval: 20 }).toBe(true);
  } finally {
    await scheduler.stop();
  }
}

/** The outbox on the real clock, its lease LEASE_MS long. */
function realTime(extra: Parameters<typeof outboxJob>[1] = {}) {
  world.clock = {
    get now() {
      return Date.now();
    },
  };
  return outboxJob(world, { leaseMs: LEASE_MS, ...extra }).outbox;
}

const delivered = async () => (await outboxRows(world)).every((r) => r.done_at !== null);

describe('a send that outlives its lease', () => {
  it('posts once when its check and the answer to its post each take longer than the lease', async () => {
    // The channel check answers late, as a slow conversations.info would; Slack takes the post at
    // once but answers it late.
    const outbox = realTime({ mayDeliver: () => sleep(SLOW_MS, true) });
    const post = world.poster.post.bind(world.poster);
    world.poster.post = async (m) => {
      const ts = await post(m);
      return sleep(SLOW_MS, ts);
    };
    await decide(world, [{ channel: 'C1', message }]);
    await delivering(outbox, delivered);
    await sleep(SLOW_MS);
    expect(world.poster.messages).toHaveLength(1);
    expect((await outboxRows(world))[0]).toMatchObject({ result: 'sent', lease_owner: null });
  });

  it('posts once when Slack answers the post after more than the lease, taking it only then', async () => {
    const outbox = realTime();
    const post = world.poster.post.bind(world.poster);
    world.poster.post = async (m) => {
      await sleep(SLOW_MS);
      return post(m);
    };
    await decide(world, [{ channel: 'C1', threadTs: '1.000001', message }]);
    await delivering(outbox, delivered);
    await sleep(SLOW_MS);
    expect(world.poster.repliesIn('C1', '1.000001')).toHaveLength(1);
  });

  it('sends no edit once a renewal finds its lease taken by another claim', async () => {
    const outbox = realTime({
      // While the check runs, the lease is lost: another claim took the message.
      mayDeliver: async () => {
        await world.store.db.updateTable('outbox').set({ lease_owner: 'another/claim' }).execute();
        await sleep(LEASE_MS);
        return true;
      },
    });
    const ts = await world.poster.post({ channel: 'C1', ...message });
    await decide(world, [{ channel: 'C1', ts, message: { ...message, text: 'Edited' } }]);
    const [row] = await outbox.claim(Date.now(), 1);
    if (!row) throw new Error('nothing claimed');
    expect(await outbox.run(row)).toEqual({ outcome: 'lease_lost' });
    expect(world.poster.messages[0]?.edits).toEqual([]);
  });

  it('fences each claim by its own token: the same instance’s earlier attempt posts nothing once it claimed again', async () => {
    const { outbox } = outboxJob(world, { leaseMs: 1000 });
    await decide(world, [{ channel: 'C1', message }]);
    const [stale] = await outbox.claim(world.clock.now, 1);
    world.clock.now += 2000;
    const [fresh] = await outbox.claim(world.clock.now, 1);
    expect(fresh?.lease_owner).not.toBe(stale?.lease_owner);
    expect(stale && (await outbox.run(stale))).toEqual({ outcome: 'lease_lost' });
    expect(fresh && (await outbox.run(fresh))).toEqual({ outcome: 'sent' });
    expect(world.poster.messages).toHaveLength(1);
  });
});
