import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_FEED_SETTINGS } from '../../src/domain/feed-settings.js';
import { feedQueries } from '../../src/feed/queries.js';
import { feedTuning } from '../../src/feed/tuning.js';
import { appUninstalled } from '../../src/listeners/workspaces/app-uninstalled.js';
import { openStore } from '../../src/store/database.js';
import { createInstallations } from '../../src/store/installations.js';
import { type InstallationId, installationId } from '../../src/store/keys.js';
import { createSealer } from '../../src/store/sealing.js';
import { captureLogs } from '../support/bolt.js';
import { subscriptionRow } from '../support/factories.js';
import { install, KEY, NOW } from '../support/installations-contract.js';

/** Many workspaces: a feed's settings and held movements are its installation's, and go with it. */

const dir = mkdtempSync(join(tmpdir(), 'bot-feed-settings-'));
const store = await openStore({ kind: 'sqlite', path: join(dir, 'bot.sqlite') });
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const GONE = installationId('T0GONE');
const STAYS = installationId('T0STAYS');

/** An installation with a feed whose settings were saved and which holds a movement. */
async function tunedFeed(id: InstallationId) {
  const queries = feedQueries(store, id);
  await store.transaction(async (trx) => {
    await queries.insert(
      trx,
      subscriptionRow({
        id: `sub-${id}`,
        team_id: id,
        channel_id: 'G0FINANCE',
        subscriber_id: 'U0ANA',
        created_at: NOW,
      }),
    );
    await queries.hold(
      trx,
      [{ subscriptionId: `sub-${id}`, currency: 'BTC', amount: '0.0001', posted: false }],
      NOW,
    );
  });
  const settings = { ...DEFAULT_FEED_SETTINGS, minimums: { BTC: '0.01' } };
  const saved = await feedTuning({ store, clock: () => NOW, queries }).saveSettings({
    subscriptionId: `sub-${id}`,
    userId: 'U0ANA',
    settings,
    digest: { hour: 9, minute: 0, zone: 'UTC' },
  });
  expect(saved.kind).toBe('saved');
  return queries;
}

const rowsOf = async (table: 'feed_settings' | 'feed_held') =>
  (await store.db.selectFrom(table).select('installation_id').execute()).map((r) => r.installation_id);

describe('feed settings per installation', () => {
  it('reads only its own installation’s, and uninstalling deletes them with it', async () => {
    const installations = createInstallations(store, createSealer({ current: KEY }), () => NOW);
    for (const id of [GONE, STAYS]) await installations.storeInstallation(install(id, `xoxb-${id}-token`));
    await tunedFeed(GONE);
    const stays = await tunedFeed(STAYS);
    // Another installation's subscription id reads as never tuned, and holds nothing.
    const theirs = await stays.settingsOf(store.db, [`sub-${GONE}`]);
    expect(theirs.get(`sub-${GONE}`)?.version).toBe(0);
    expect(await stays.unposted(store.db, [`sub-${GONE}`])).toEqual([]);

    const logs = captureLogs();
    const uninstalled = appUninstalled({ installations, logger: logs.logger, forget: () => undefined });
    await uninstalled({
      body: { event_time: 1_800_000_000 },
      context: { teamId: 'T0GONE', isEnterpriseInstall: false },
    });
    expect(await rowsOf('feed_settings')).toEqual([STAYS]);
    expect(await rowsOf('feed_held')).toEqual([STAYS]);
  });
});
