import { afterAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_FEED_SETTINGS } from '../../src/domain/feed-settings.js';
import { feedQueries } from '../../src/feed/queries.js';
import { feedTuning } from '../../src/feed/tuning.js';
import { openStore } from '../../src/store/database.js';
import { installationId } from '../../src/store/keys.js';
import { subscriptionRow } from '../support/factories.js';
import { freshDatabase } from '../support/postgres-server.js';

/**
 * Two instances saving the same Settings submission at the same moment, on PostgreSQL where
 * their transactions truly overlap: the change is said once, by the save the version fence let
 * through; the other finds nothing left to change.
 */

const url = await freshDatabase(inject('postgresUrl'));
const stores = [await openStore({ kind: 'postgres', url }), await openStore({ kind: 'postgres', url })];
afterAll(() => Promise.all(stores.map((s) => s.close())));

const INSTALLATION = installationId('T0RACE');
const NOW = Date.parse('2026-11-21T08:00:00Z');

describe('saving a feed’s Settings from two instances at once', () => {
  it('says each change once, however the two transactions interleave', async () => {
    const [first, second] = stores.map((store) =>
      feedTuning({ store, clock: () => NOW, queries: feedQueries(store, INSTALLATION) }),
    );
    const store = stores[0];
    if (!store || !first || !second) throw new Error('two stores');
    await store.transaction((trx) =>
      feedQueries(store, INSTALLATION).insert(
        trx,
        subscriptionRow({
          id: 'sub-race',
          team_id: 'T0RACE',
          channel_id: 'G0RACE',
          subscriber_id: 'U0ANA',
          created_at: NOW,
        }),
      ),
    );
    const digest = { hour: 9, minute: 0, zone: 'UTC' };
    const rounds = 12;
    for (let round = 1; round <= rounds; round += 1) {
      const save = {
        subscriptionId: 'sub-race',
        userId: 'U0ANA',
        settings: { ...DEFAULT_FEED_SETTINGS, minimums: { BTC: `0.00${round}` } },
        digest,
      };
      const results = await Promise.all([first.saveSettings(save), second.saveSettings(save)]);
      expect(results.map((r) => r.kind).sort()).toEqual(['saved', 'unchanged']);
    }
    const said = await store.db.selectFrom('outbox').select('message').orderBy('id').execute();
    expect(said).toHaveLength(rounds);
    expect(JSON.parse(said[0]?.message ?? '{}').text).toBe('<@U0ANA> set the minimum for BTC to 0.001.');
    const row = await store.db.selectFrom('feed_settings').select('version').executeTakeFirstOrThrow();
    expect(Number(row.version)).toBe(rounds);
  });
});
