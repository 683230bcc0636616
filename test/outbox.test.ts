import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { enqueue, KEEP_DONE_MS, MAX_ATTEMPTS, type OutboxRow, outboxJob } from '../src/outbox.js';
import { SlackPostError } from '../src/slack/poster.js';
import { openStore, type Store } from '../src/store/database.js';
import { captureLogs } from './support/bolt.js';
import { type RecordingPoster, recordingPoster } from './support/fake-slack.js';

const T0 = Date.parse('2026-11-21T08:00:00Z');
const message = {
  text: 'Paid',
  blocks: [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text: 'Paid' } }],
};

let store: Store;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bot-outbox-'));
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

function job(owner = 'a', extra: { undeliverable?: OutboxRow[]; leaseMs?: number } = {}) {
  const logs = captureLogs();
  const outbox = outboxJob({
    store,
    poster,
    logger: logs.logger,
    clock: () => clock.now,
    owner,
    ...(extra.leaseMs ? { leaseMs: extra.leaseMs } : {}),
    onUndeliverable: async (row) => {
      extra.undeliverable?.push(row);
    },
  });
  return { outbox, logs };
}

const rows = () => store.db.selectFrom('outbox').selectAll().orderBy('id').execute();
const put = (entries: Parameters<typeof enqueue>[1]) =>
  store.transaction((trx) => enqueue(trx, entries, clock.now));

async function runOnce(outbox: ReturnType<typeof job>['outbox']) {
  const [row] = await outbox.claim(clock.now, 1);
  if (!row) throw new Error('nothing due');
  return outbox.run(row);
}

describe('the outbox', () => {
  it('is named, runs four at once, and says when each message is due', async () => {
    const { outbox } = job();
    expect([outbox.name, outbox.concurrency]).toEqual(['outbox', 4]);
    await put([{ channel: 'C1', message }]);
    const [row] = await outbox.claim(clock.now, 1);
    expect(row && outbox.dueAt(row)).toBe(T0);
  });

  it('posts in a thread and edits a message by its ts', async () => {
    const { outbox } = job();
    const ts = await poster.post({ channel: 'C1', ...message });
    await put([
      { channel: 'C1', threadTs: ts, message },
      { channel: 'C1', ts, message: { ...message, text: 'Edited' } },
    ]);
    expect(await runOnce(outbox)).toEqual({ outcome: 'sent' });
    expect(await runOnce(outbox)).toEqual({ outcome: 'sent' });
    expect(poster.repliesIn('C1', ts)).toHaveLength(1);
    expect(poster.messages[0]?.edits.map((e) => e.text)).toEqual(['Edited']);
    expect((await rows()).map((r) => [r.result, r.done_at])).toEqual([
      ['sent', T0],
      ['sent', T0],
    ]);
  });

  it('finds a post an earlier attempt made before a crash, and does not post it again', async () => {
    const { outbox } = job('a', { leaseMs: 1000 });
    await put([{ channel: 'C1', message }]);
    const [row] = await outbox.claim(clock.now, 1);
    // The first instance marks the attempt and posts, then dies before recording it.
    await store.db.updateTable('outbox').set({ attempted_at: clock.now }).execute();
    await poster.post({ channel: 'C1', ...message, messageId: `outbox-${row?.id}` });
    clock.now += 2000;
    const { outbox: b } = job('b');
    expect(await runOnce(b)).toEqual({ outcome: 'found' });
    expect(poster.messages).toHaveLength(1);
    expect((await rows())[0]?.result).toBe('found');
  });

  it('posts again when Slack will not say whether an earlier attempt went out, and says so', async () => {
    const { outbox, logs } = job();
    await put([{ channel: 'C1', message }]);
    await store.db
      .updateTable('outbox')
      .set({ attempted_at: T0 - 1000 })
      .execute();
    poster.failNext(new SlackPostError('refused', 'missing_scope'));
    expect(await runOnce(outbox)).toEqual({ outcome: 'sent' });
    expect(poster.messages).toHaveLength(1);
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
    await store.db
      .updateTable('outbox')
      .set({ attempted_at: T0 - 1000 })
      .execute();
    poster.failNext(new SlackPostError('transient', undefined));
    expect(await runOnce(outbox)).toEqual({ outcome: 'retry_later' });
    expect(poster.messages).toHaveLength(0);
  });

  it('posts nothing once another instance has taken its lease', async () => {
    const { outbox } = job('a', { leaseMs: 1000 });
    await put([{ channel: 'C1', message }]);
    const [stale] = await outbox.claim(clock.now, 1);
    clock.now += 2000;
    const { outbox: b } = job('b');
    const [fresh] = await b.claim(clock.now, 1);
    expect(stale && (await outbox.run(stale))).toEqual({ outcome: 'lease_lost' });
    expect(fresh && (await b.run(fresh))).toEqual({ outcome: 'sent' });
    expect(poster.messages).toHaveLength(1);
  });

  it('waits as long as Slack asks after a 429, and backs off after an outage', async () => {
    const { outbox } = job();
    await put([{ channel: 'C1', message }]);
    poster.failNext(new SlackPostError('rate_limited', 'ratelimited', 7000));
    expect(await runOnce(outbox)).toEqual({ outcome: 'retry_later' });
    expect((await rows())[0]).toMatchObject({ next_attempt_at: T0 + 7000, attempts: 1, lease_owner: null });
    clock.now += 7000;
    poster.failNext(new SlackPostError('transient', undefined));
    expect(await runOnce(outbox)).toEqual({ outcome: 'retry_later' });
    expect((await rows())[0]).toMatchObject({ next_attempt_at: clock.now + 4000, attempts: 2 });
  });

  it('gives up after the last attempt, and at once on a message Slack will never take', async () => {
    const undeliverable: OutboxRow[] = [];
    const { outbox, logs } = job('a', { undeliverable });
    await put([
      { channel: 'C1', message },
      { channel: 'C2', ts: '1.000001', message },
    ]);
    await store.db
      .updateTable('outbox')
      .set({ attempts: MAX_ATTEMPTS - 1 })
      .where('channel', '=', 'C1')
      .execute();
    poster.failNext(new SlackPostError('transient', undefined));
    expect(await runOnce(outbox)).toEqual({ outcome: 'dropped' });
    expect(undeliverable).toEqual([]);
    poster.failNext(new SlackPostError('message_not_found', 'message_not_found'));
    expect(await runOnce(outbox)).toEqual({ outcome: 'dropped' });
    expect(undeliverable.map((r) => r.channel)).toEqual(['C2']);
    expect((await rows()).map((r) => r.result)).toEqual(['dropped: transient', 'dropped: message_not_found']);
    expect(logs.lines.filter((l) => l.msg === 'gave up on a message to Slack').map((l) => l.method)).toEqual([
      'chat.postMessage',
      'chat.update',
    ]);
  });

  it('forgets delivered messages a day later', async () => {
    const { outbox } = job();
    await put([{ channel: 'C1', message }]);
    await runOnce(outbox);
    clock.now += KEEP_DONE_MS;
    await outbox.claim(clock.now, 1);
    expect(await rows()).toHaveLength(1);
    clock.now += 1;
    await outbox.claim(clock.now, 1);
    expect(await rows()).toEqual([]);
  });

  it('lets a bug through', async () => {
    await put([{ channel: 'C1', message }]);
    const broken = { ...poster, post: async () => Promise.reject(new TypeError('a bug')) };
    const bugged = outboxJob({
      store,
      poster: broken,
      logger: captureLogs().logger,
      clock: () => clock.now,
      owner: 'a',
    });
    const [row] = await bugged.claim(clock.now, 1);
    await expect(row && bugged.run(row)).rejects.toThrow('a bug');
  });
});
