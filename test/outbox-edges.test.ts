import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type DropReason, enqueue, outboxBacklog, RETRY_FOR_MS } from '../src/outbox.js';
import { UNSERVED_RETRY_MS } from '../src/scheduler.js';
import { SlackPostError } from '../src/slack/calls.js';
import type { SlackPoster } from '../src/slack/poster.js';
import { openStore, type Store } from '../src/store/database.js';
import { captureLogs } from './support/bolt.js';
import { type RecordingPoster, recordingPoster } from './support/fake-slack.js';
import { outboxOf } from './support/jobs.js';

const T0 = Date.parse('2026-11-21T08:00:00Z');
const message = {
  text: 'Paid',
  blocks: [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text: 'Paid' } }],
};

let store: Store;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bot-outbox-edges-'));
  store = await openStore({ kind: 'sqlite', path: join(dir, 'bot.sqlite') });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

let poster: RecordingPoster;
let clock: { now: number };
beforeEach(async () => {
  await store.db.deleteFrom('outbox').execute();
  poster = recordingPoster();
  clock = { now: T0 };
});

function job(
  extra: { mayDeliver?: () => Promise<boolean>; posterOf?: () => Promise<SlackPoster | undefined> } = {},
) {
  const logs = captureLogs();
  const dropped: DropReason[] = [];
  const outbox = outboxOf({
    store,
    posterOf: extra.posterOf ?? (async () => poster),
    logger: logs.logger,
    clock: () => clock.now,
    owner: 'a',
    onDropped: (reason) => dropped.push(reason),
    ...(extra.mayDeliver ? { mayDeliver: extra.mayDeliver } : {}),
  });
  return { outbox, logs, dropped };
}

const rows = () => store.db.selectFrom('outbox').selectAll().orderBy('id').execute();
const put = (entries: Parameters<typeof enqueue>[1], installation?: string) =>
  store.transaction((trx) => enqueue(trx, entries, clock.now, installation));

async function runOnce(outbox: ReturnType<typeof job>['outbox']) {
  const [row] = await outbox.claim(clock.now, 1);
  if (!row) throw new Error('nothing due');
  return outbox.run(row);
}

describe('the outbox, at the edges', () => {
  it('gives up on a message exactly a day after it was decided', async () => {
    const { outbox, dropped } = job();
    await put([{ channel: 'C1', message }]);
    clock.now = T0 + RETRY_FOR_MS;
    poster.failNext(new SlackPostError('transient', 'internal_error'));
    expect(await runOnce(outbox)).toEqual({ outcome: 'dropped' });
    expect(dropped).toEqual(['gave_up']);
    expect((await rows())[0]?.result).toBe('dropped: internal_error');
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
    clock.now = T0 + 5_000;
    expect(await runOnce(outbox)).toMatchObject({ outcome: 'paused' });
    expect((await rows())[0]).toMatchObject({
      next_attempt_at: T0 + 5_000 + UNSERVED_RETRY_MS,
      attempts: 0,
      lease_owner: null,
      done_at: null,
    });
    expect(await outbox.claim(clock.now, 1)).toEqual([]);
  });

  it('names the channel of a message in what it says of it, and its installation when there are many', async () => {
    const { outbox } = job();
    await put([{ channel: 'C1', message }]);
    await put([{ channel: 'C2', message }], 'T0OTHER');
    const claimed = await outbox.claim(clock.now, 2);
    expect(claimed.map((row) => outbox.describe?.(row))).toEqual([
      { channel: 'C1' },
      { installation: 'T0OTHER', channel: 'C2' },
    ]);
  });

  it('says how many messages wait for one installation, and since when', async () => {
    await put([{ channel: 'C1', message }], 'T0ONE');
    clock.now += 60_000;
    await put(
      [
        { channel: 'C1', message },
        { channel: 'C2', message },
      ],
      'T0TWO',
    );
    expect(await outboxBacklog(store, 'T0TWO')).toEqual({ pending: 2, oldestAt: T0 + 60_000 });
    expect(await outboxBacklog(store, 'T0ONE')).toEqual({ pending: 1, oldestAt: T0 });
    expect(await outboxBacklog(store, 'T0NONE')).toEqual({ pending: 0, oldestAt: undefined });
    expect(await outboxBacklog(store)).toEqual({ pending: 3, oldestAt: T0 });
  });
});
