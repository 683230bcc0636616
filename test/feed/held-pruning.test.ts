import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { feedQueries } from '../../src/feed/queries.js';
import { openStore } from '../../src/store/database.js';
import { installationId } from '../../src/store/keys.js';

/** Held movements (below a channel's minimum) are kept until shown, but never without bound. */

const dir = mkdtempSync(join(tmpdir(), 'bot-held-pruning-'));
const store = await openStore({ kind: 'sqlite', path: join(dir, 'bot.sqlite') });
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const DAY = 24 * 3_600_000;
const NOW = Date.parse('2026-11-29T09:00:00Z');
const HOME = installationId('T0HOME');
const OTHER = installationId('T0OTHER');

/** Holds one movement of `amount` at `at` for the installation's feed, posted or not. */
async function held(installation: typeof HOME, amount: string, at: number, posted = false) {
  await store.transaction((trx) =>
    feedQueries(store, installation).hold(
      trx,
      [{ subscriptionId: `sub-${installation}`, currency: 'BTC', amount, posted }],
      at,
    ),
  );
}

const kept = async () =>
  (await store.db.selectFrom('feed_held').select(['installation_id', 'amount']).orderBy('id').execute()).map(
    (r) => `${r.installation_id} ${r.amount}`,
  );

describe('pruning held movements', () => {
  it('deletes those a post or a digest showed once old, keeps one nobody saw for longer, and none past the bound', async () => {
    const home = feedQueries(store, HOME);
    await held(HOME, '0.1', NOW - 10 * DAY, true); // posted, old: goes
    await held(HOME, '0.2', NOW - 10 * DAY); // digested below, old: goes
    await store.transaction((trx) => home.takeHeld(trx, `sub-${HOME}`));
    await held(HOME, '0.3', NOW - 10 * DAY); // shown by nobody, old: waits for the next post
    await held(HOME, '0.4', NOW - 40 * DAY); // shown by nobody, past the bound: goes
    await held(HOME, '0.5', NOW - 1 * DAY, true); // posted, recent: stays
    await held(OTHER, '0.6', NOW - 40 * DAY); // another installation's: not this prune's
    await store.transaction((trx) => home.pruneHeld(trx, { shown: NOW - 8 * DAY, any: NOW - 32 * DAY }));
    expect(await kept()).toEqual(['T0HOME 0.3', 'T0HOME 0.5', 'T0OTHER 0.6']);
  });
});
