import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BotPauses } from '../../src/demo/bot-pauses.js';
import { digestNow, NO_FEED } from '../../src/demo/digest-now.js';
import { withStoreFile } from '../../src/demo/sample-history.js';
import { feedQueries } from '../../src/feed/queries.js';
import { ONE_WORKSPACE } from '../../src/store/keys.js';

/** "Post today's digest now": each feed's digest made due in the bot's SQLite file, with the bot stopped. */

const NOW = Date.parse('2026-11-29T19:30:00Z');
const TOMORROW_9 = Date.parse('2026-11-30T09:00:00Z');
let dir = '';
let file = '';
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'demo-digest-now-'));
  file = join(dir, 'bot.sqlite');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The runner's side: the bot "stops", the work is done in between, and the bot is "back". */
function stoppedBot(steps: string[]): BotPauses {
  const pauses: BotPauses = new BotPauses(async () => {
    steps.push('bot stopped');
    await pauses.runBetween();
    steps.push('bot back');
    pauses.resumed();
  });
  return pauses;
}

const feedsIn = (path: string) =>
  withStoreFile(path, (store) => feedQueries(store, ONE_WORKSPACE).active(store.db));

describe('posting today’s digest now in the demo', () => {
  it('makes the feed’s digest due now, its time of day kept, while the bot is stopped', async () => {
    await withStoreFile(file, (store) =>
      store.transaction((trx) =>
        feedQueries(store, ONE_WORKSPACE).insert(trx, {
          id: 'feed-1',
          team_id: 'T0DEMO',
          channel_id: 'G0PAYMENTS',
          subscriber_id: 'U0YOU',
          digest_hour: 9,
          digest_minute: 0,
          digest_zone: 'UTC',
          state: 'active',
          created_at: NOW - 60_000,
          ended_at: null,
          end_reason: null,
          next_digest_at: TOMORROW_9,
          lease_owner: 'an instance that died',
          lease_until: NOW + 60_000,
          key_notice_at: null,
        }),
      ),
    );
    const steps: string[] = [];
    expect(await digestNow(stoppedBot(steps), file, () => NOW)()).toBeUndefined();
    expect(steps).toEqual(['bot stopped', 'bot back']);
    const [feed] = await feedsIn(file);
    expect(feed).toMatchObject({ next_digest_at: NOW, digest_hour: 9, digest_minute: 0, lease_owner: null });
  });

  it('with no feed on, says to turn one on first', async () => {
    expect(await digestNow(stoppedBot([]), file, () => NOW)()).toBe(NO_FEED);
    expect(NO_FEED).toContain('/balance subscribe');
  });
});
