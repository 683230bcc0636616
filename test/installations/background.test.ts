import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { backgroundParts } from '../../src/installations/background.js';
import type { Tenant } from '../../src/installations/tenant.js';
import { openStore, type Store } from '../../src/store/database.js';
import { installationId, ONE_WORKSPACE } from '../../src/store/keys.js';
import type { ClaimedCheck } from '../../src/watches/queries-checks.js';
import { captureLogs, TEST_WATCH_SETTINGS } from '../support/bolt.js';
import { watchesOf } from '../support/jobs.js';

/**
 * Background work asks the store, before it calls the payment service for an installation, whether
 * the service rejects its key (one call a minute then). A store that does not answer just then
 * must leave the work waiting, and say which installation's work it was.
 */

/** A store that no longer answers: every query fails, as when the database goes away. */
let closed: Store;
beforeAll(async () => {
  closed = await openStore({
    kind: 'sqlite',
    path: join(mkdtempSync(join(tmpdir(), 'background-')), 'bot.sqlite'),
  });
  await closed.close();
});

/** An installation's part that background work could use, were it allowed to call the service. */
const servable = { watches: {}, checker: {}, feed: {}, poster: {} } as unknown as Tenant;

function unanswered() {
  const logs = captureLogs();
  const asked: string[] = [];
  const parts = backgroundParts(
    {
      partOf: async (id) => {
        asked.push(id);
        return servable;
      },
    },
    {
      store: closed,
      logger: logs.logger,
      clock: () => 1_000_000,
      settings: { watches: TEST_WATCH_SETTINGS },
    },
  );
  const warnings = () =>
    logs.lines.filter((l) => l.msg === 'could not serve an installation’s background work');
  return { parts, asked, warnings };
}

describe('background work while the store does not answer', () => {
  it('leaves an installation’s checks and readings waiting, and says which installation’s work it was', async () => {
    const { parts, asked, warnings } = unanswered();
    expect(await parts.feedOf(installationId('T0ONE'))).toBeUndefined();
    // A claim's watches: its read fails whole, and the runner gives the claim back (scheduler-leases).
    await expect(parts.checkersOf([installationId('T0ONE')])).rejects.toThrow();
    expect(asked).toEqual([]);
    expect(warnings()).toHaveLength(1);
    for (const line of warnings()) {
      expect(line).toMatchObject({ level: 'warn', installation: 'T0ONE' });
      expect(line.err).toMatchObject({ message: expect.any(String) });
    }
  });

  it('names no installation when it is the one workspace’s work', async () => {
    const { parts, asked, warnings } = unanswered();
    expect(await parts.feedOf(ONE_WORKSPACE)).toBeUndefined();
    expect(asked).toEqual([]);
    const [line] = warnings();
    expect(line).toMatchObject({ level: 'warn' });
    expect(line).not.toHaveProperty('installation');
  });
});

describe('background work of an installation with no payment account', () => {
  it('lets go of a claimed invoice no watch is left of, instead of claiming it again every lease', async () => {
    const store = await openStore({
      kind: 'sqlite',
      path: join(mkdtempSync(join(tmpdir(), 'background-')), 'bot.sqlite'),
    });
    await store.db
      .insertInto('watched_invoices')
      .values({
        installation_id: installationId('T0GONE'),
        invoice_id: 'I-ORPHAN',
        snapshot: '{}',
        watched_since: 1,
        next_poll_at: 1,
        failures: 0,
      })
      .execute();
    const logs = captureLogs();
    const unconnected = {
      watches: undefined,
      checker: undefined,
      feed: undefined,
      poster: {},
    } as unknown as Tenant;
    const parts = backgroundParts(
      { partOf: async () => unconnected },
      { store, logger: logs.logger, clock: () => 1_000_000, settings: { watches: TEST_WATCH_SETTINGS } },
    );
    const checker = await watchesOf(parts, installationId('T0GONE'));
    expect(await checker?.check({ invoice_id: 'I-ORPHAN' } as ClaimedCheck)).toEqual({
      outcome: 'not_connected',
    });
    expect(await store.db.selectFrom('watched_invoices').selectAll().execute()).toEqual([]);
    await store.close();
  });
});
