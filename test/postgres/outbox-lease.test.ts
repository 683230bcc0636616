import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, inject, it } from 'vitest';
import { Inflight } from '../../src/inflight.js';
import { enqueue } from '../../src/outbox.js';
import { createScheduler } from '../../src/scheduler.js';
import { openStore } from '../../src/store/database.js';
import { ONE_WORKSPACE } from '../../src/store/keys.js';
import { captureLogs } from '../support/bolt.js';
import { recordingPoster } from '../support/fake-slack.js';
import { outboxOf } from '../support/jobs.js';
import { freshDatabase } from '../support/postgres-server.js';

/**
 * A send that outlives its lease, on PostgreSQL with two instances delivering from one database:
 * Slack takes a thread reply only when it answers, after more than a lease (shortened here to
 * LEASE_MS). The instance sending it keeps its lease; the other never starts a second attempt.
 */

const LEASE_MS = 300;
const SLOW_MS = 1_200;
const store = await openStore({ kind: 'postgres', url: await freshDatabase(inject('postgresUrl')) });
const message = {
  text: 'Paid',
  blocks: [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text: 'Paid' } }],
};

describe('a slow Slack, two instances on PostgreSQL', () => {
  it('gets a thread reply it answers after more than the lease once', async () => {
    const poster = recordingPoster();
    const post = poster.post.bind(poster);
    poster.post = async (m) => {
      await sleep(SLOW_MS);
      return post(m);
    };
    await store.transaction((trx) =>
      enqueue(
        trx,
        [{ channel: 'C1', threadTs: '1.000001', message, watchId: 'w-1' }],
        Date.now(),
        ONE_WORKSPACE,
      ),
    );
    const logs = captureLogs();
    const instances = ['a', 'b'].map((owner) =>
      createScheduler({ logger: logs.logger, inflight: new Inflight(), clock: Date.now }, [
        outboxOf({
          store,
          posterOf: async () => poster,
          logger: logs.logger,
          clock: Date.now,
          owner,
          leaseMs: LEASE_MS,
        }),
      ]),
    );
    for (const instance of instances) instance.start();
    try {
      await expect
        .poll(
          async () => (await store.db.selectFrom('outbox').select('done_at').executeTakeFirst())?.done_at,
          {
            timeout: 10_000,
          },
        )
        .not.toBeNull();
      await sleep(SLOW_MS);
    } finally {
      await Promise.all(instances.map((i) => i.stop()));
    }
    expect(poster.repliesIn('C1', '1.000001')).toHaveLength(1);
    await store.close();
  });
});
