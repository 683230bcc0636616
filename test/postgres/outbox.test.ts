import { describe, expect, inject, it } from 'vitest';
import { enqueue, type OutboxRow } from '../../src/outbox.js';
import { openStore } from '../../src/store/database.js';
import { installationId } from '../../src/store/keys.js';
import { captureLogs } from '../support/bolt.js';
import { recordingPoster } from '../support/fake-slack.js';
import { outboxOf } from '../support/jobs.js';
import { leaseRenewalContract } from '../support/lease-renewal-contract.js';
import { freshDatabase } from '../support/postgres-server.js';

/**
 * The outbox's claim on PostgreSQL, where it differs from SQLite: the lease is taken with
 * FOR UPDATE SKIP LOCKED, by instances claiming at the same moment.
 */

const store = await openStore({ kind: 'postgres', url: await freshDatabase(inject('postgresUrl')) });
const message = {
  text: 'Paid',
  blocks: [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text: 'Paid' } }],
};

/** Messages to `installation`, `count` of them spread over `channels` channels, texts `<prefix><n>`. */
const queue = (installation: string, prefix: string, count: number, channels: number) =>
  store.transaction((trx) =>
    enqueue(
      trx,
      Array.from({ length: count }, (_, n) => ({
        channel: `C${installation}${n % channels}`,
        message: { ...message, text: `${prefix}${n}` },
      })),
      0,
      installationId(installation),
    ),
  );

const job = (owner: string, poster = recordingPoster()) =>
  outboxOf({ store, posterOf: async () => poster, logger: captureLogs().logger, clock: () => 0, owner });

describe('the outbox on PostgreSQL', () => {
  it('delivers one workspace’s single message in the first round, not after another’s backlog', async () => {
    await store.db.deleteFrom('outbox').execute();
    await queue('T0BACKLOG', 'a', 60, 20);
    await queue('T0SHOP', 'paid', 1, 1);
    const poster = recordingPoster();
    const outbox = job('x', poster);
    for (let batch = await outbox.claim(0, 4); batch.length > 0; batch = await outbox.claim(0, 4))
      for (const row of batch) await outbox.run(row);
    const delivered = poster.messages.map((m) => m.text);
    expect(delivered.indexOf('paid0') + 1).toBe(2);
    expect(new Set(delivered).size).toBe(61);
    for (let channel = 0; channel < 20; channel += 1)
      expect(poster.messages.filter((m) => m.channel === `CT0BACKLOG${channel}`).map((m) => m.text)).toEqual([
        `a${channel}`,
        `a${channel + 20}`,
        `a${channel + 40}`,
      ]);
  });

  it('gives each message to one instance only, one of a channel at a time, however many claim at once', async () => {
    await store.db.deleteFrom('outbox').execute();
    await queue('T0BACKLOG', 'a', 60, 20);
    await queue('T0SHOP', 'paid', 3, 3);
    const poster = recordingPoster();
    const instances = Array.from({ length: 3 }, (_, i) => job(`i${i}`, poster));
    let first: OutboxRow[] | undefined;
    for (let round = 0; round < 50; round += 1) {
      const claims = await Promise.all(instances.map((outbox) => outbox.claim(0, 4)));
      const claimed = claims.flat();
      if (claimed.length === 0) break;
      first ??= claimed;
      expect(new Set(claimed.map((r) => r.id)).size).toBe(claimed.length);
      expect(new Set(claimed.map((r) => r.lane)).size).toBe(claimed.length);
      await Promise.all(claims.map((rows, i) => Promise.all(rows.map((row) => instances[i]?.run(row)))));
    }
    // Twelve slots for 23 channels' first messages: the shop's three are among the first claims, not after the backlog.
    expect(first?.filter((r) => r.installation_id === 'T0SHOP')).toHaveLength(3);
    expect(poster.messages).toHaveLength(63);
    for (let channel = 0; channel < 20; channel += 1)
      expect(poster.messages.filter((m) => m.channel === `CT0BACKLOG${channel}`).map((m) => m.text)).toEqual([
        `a${channel}`,
        `a${channel + 20}`,
        `a${channel + 40}`,
      ]);
  });
});

leaseRenewalContract('PostgreSQL', async () =>
  openStore({ kind: 'postgres', url: await freshDatabase(inject('postgresUrl')) }),
);
