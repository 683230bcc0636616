import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedClaims } from '../../src/feed/queries.js';
import { openStore, type Store } from '../../src/store/database.js';
import { type InstallationId, installationId } from '../../src/store/keys.js';
import { stepBackGuard } from '../../src/store/schedules.js';
import { subscriptionRow } from '../support/factories.js';

const dir = mkdtempSync(join(tmpdir(), 'bot-schedules-'));
let store: Store;
beforeAll(async () => {
  store = await openStore({ kind: 'sqlite', path: join(dir, 'bot.sqlite') });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const NOW = 1_800_000_000_000;
const TEN_MINUTES = 10 * 60_000;

/** A feed's balance poll due at `nextRunAt`, leased until `leaseUntil`, with its feed running. */
async function poll(installation: InstallationId, nextRunAt: number, leaseUntil: number | null) {
  await store.db
    .insertInto('feed_subscriptions')
    .values({
      ...subscriptionRow({
        id: `sub-${installation}`,
        team_id: 'T0',
        channel_id: 'G0FIN',
        subscriber_id: 'U0',
        created_at: NOW,
        next_digest_at: NOW + 86_400_000,
      }),
      installation_id: installation,
    })
    .execute();
  await store.db
    .insertInto('singletons')
    .values({
      installation_id: installation,
      name: 'balance_poll',
      next_run_at: nextRunAt,
      lease_owner: leaseUntil === null ? null : 'gone-instance',
      lease_until: leaseUntil,
      last_success_at: null,
    })
    .execute();
}

describe('a clock stepped back ten minutes', () => {
  it('pulls back what was scheduled further ahead than its schedule ever puts it, once a minute', async () => {
    await poll(installationId('A'), NOW + 60_000, null);
    await poll(installationId('B'), NOW + 30_000, null);
    const guard = stepBackGuard(store, { table: 'singletons', column: 'next_run_at', maxAheadMs: 120_000 });
    expect(await guard(NOW)).toBe(0);
    const back = NOW - TEN_MINUTES;
    // The clock went back past the last look: looked at at once.
    expect(await guard(back)).toBe(2);
    const times = await store.db.selectFrom('singletons').select('next_run_at').execute();
    expect(times.map((t) => t.next_run_at)).toEqual([back, back]);
    // Within the minute after a look, nothing is read again, even what a look would pull back.
    await store.db
      .updateTable('singletons')
      .set({ next_run_at: back + TEN_MINUTES })
      .execute();
    expect(await guard(back)).toBe(0);
    expect(await guard(back + 59_999)).toBe(0);
    // A minute on, it looks again.
    expect(await guard(back + 60_000)).toBe(2);
  });

  it('leaves a lease taken before the step to its holder: its work is not claimed a second time', async () => {
    await store.db.deleteFrom('singletons').execute();
    await store.db.deleteFrom('feed_subscriptions').execute();
    const back = NOW - TEN_MINUTES;
    // Leased for 30 s, by the clock before the step, by an instance still at it.
    await poll(installationId('C'), back, NOW + 30_000);
    await poll(installationId('D'), back, back - 1);
    const claimed = await feedClaims(store).claimPolls('instance-1', back, 5, 30_000);
    expect(claimed.map((c) => c.installation_id)).toEqual(['D']);
  });
});
