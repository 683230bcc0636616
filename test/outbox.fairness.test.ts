import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { enqueue, type OutboxRow } from '../src/outbox.js';
import { openStore, type Store } from '../src/store/database.js';
import { installationId } from '../src/store/keys.js';
import { captureLogs } from './support/bolt.js';
import { type RecordingPoster, recordingPoster } from './support/fake-slack.js';
import { outboxOf } from './support/jobs.js';

/** The outbox's slots shared between workspaces: one workspace's backlog does not hold back another's message. */

const T0 = Date.parse('2026-11-21T08:00:00Z');

let store: Store;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bot-outbox-fairness-'));
  store = await openStore({ kind: 'sqlite', path: join(dir, 'bot.sqlite') });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

let poster: RecordingPoster;
beforeEach(async () => {
  await store.db.deleteFrom('outbox').execute();
  poster = recordingPoster();
});

const job = () =>
  outboxOf({
    store,
    posterOf: async () => poster,
    logger: captureLogs().logger,
    clock: () => T0,
    owner: 'a',
  });

/** Messages to `installation`, `count` of them spread over `channels` channels, texts `<prefix><n>`. */
const queue = (installation: string, prefix: string, count: number, channels: number) =>
  store.transaction((trx) =>
    enqueue(
      trx,
      Array.from({ length: count }, (_, n) => {
        const text = `${prefix}${n}`;
        return {
          channel: `C${installation}${n % channels}`,
          message: { text, blocks: [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text } }] },
        };
      }),
      T0,
      installationId(installation),
    ),
  );
const delivered = () => poster.messages.map((m) => m.text);

describe('the outbox, shared between workspaces', () => {
  it('delivers one workspace’s single message in the first round, not after another’s backlog', async () => {
    const outbox = job();
    await queue('T0BACKLOG', 'a', 60, 20);
    await queue('T0SHOP', 'paid', 1, 1);
    // As the scheduler does with the outbox's four slots, one claim after another.
    for (let batch = await outbox.claim(T0, 4); batch.length > 0; batch = await outbox.claim(T0, 4))
      for (const row of batch) await outbox.run(row);
    // Every workspace's first turn before anyone's second: the shop's 'paid' goes out second, not 61st.
    expect(delivered().indexOf('paid0') + 1).toBe(2);
    const backlog = delivered().filter((text) => text.startsWith('a'));
    expect(new Set(backlog).size).toBe(60);
    expect(backlog).toHaveLength(60);
    // Each channel's messages in the order they were decided.
    for (let channel = 0; channel < 20; channel += 1) {
      const inChannel = poster.messages
        .filter((m) => m.channel === `CT0BACKLOG${channel}`)
        .map((m) => m.text);
      expect(inChannel).toEqual([`a${channel}`, `a${channel + 20}`, `a${channel + 40}`]);
    }
  });

  it('gives the next free slot to another workspace while one holds several', async () => {
    const outbox = job();
    await queue('T0BACKLOG', 'a', 60, 20);
    // Alone, a workspace may use every slot.
    const first = await outbox.claim(T0, 4);
    expect(first.map((r) => r.installation_id)).toEqual(Array(4).fill('T0BACKLOG'));
    await queue('T0SHOP', 'paid', 1, 1);
    // One of the four finishes: the slot it frees goes to the shop, not to a fifth of the backlog.
    await outbox.run(first[0] as OutboxRow);
    const next = await outbox.claim(T0, 1);
    expect(next.map((r) => r.installation_id)).toEqual(['T0SHOP']);
    await outbox.run(next[0] as OutboxRow);
    expect(delivered()).toEqual(['a0', 'paid0']);
  });
});
