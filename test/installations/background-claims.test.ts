import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backgroundParts } from '../../src/installations/background.js';
import type { Tenant } from '../../src/installations/tenant.js';
import { serviceState } from '../../src/service-state.js';
import { openStore, type Store } from '../../src/store/database.js';
import type { InstallationSummary } from '../../src/store/installations.js';
import { installationId } from '../../src/store/keys.js';
import type { ClaimedCheck } from '../../src/watches/queries-checks.js';
import { captureLogs, TEST_WATCH_SETTINGS } from '../support/bolt.js';

/**
 * A claim's installations are served with what one read of their summaries says of them all:
 * whose keys the service rejects (only those ask for their probe), and the rest of each
 * (no installation read again, check by check).
 */

let store: Store;
beforeAll(async () => {
  store = await openStore({
    kind: 'sqlite',
    path: join(mkdtempSync(join(tmpdir(), 'claims-')), 'bot.sqlite'),
  });
});
afterAll(() => store.close());

const summary = (id: string) => ({ id, keyRejected: id === 'T0BAD' }) as InstallationSummary;

describe('the watches of a claim’s installations', () => {
  it('reads the summaries once, whose keys are rejected with them, gives each part its summary (a rejected key’s too), and tells each check whether its key was', async () => {
    const logs = captureLogs();
    await serviceState(store, logs.logger, { installation: installationId('T0BAD') }).markKeyRejected(
      1_000_000 - 120_000,
    );
    const given: [string, InstallationSummary | undefined][] = [];
    const told: [string, unknown][] = [];
    const part = (id: string) =>
      ({
        checker: {
          check: async (_row: ClaimedCheck, known: unknown) => {
            told.push([id, known]);
            return { outcome: 'unchanged' };
          },
        },
      }) as unknown as Tenant;
    const summariesAsked: string[][] = [];
    const parts = backgroundParts(
      {
        partOf: async (id, known) => {
          given.push([id, known]);
          return part(id);
        },
        summariesOf: async (ids) => {
          summariesAsked.push([...ids]);
          return new Map(ids.filter((id) => id !== 'T0GONE').map((id) => [id, summary(id)]));
        },
      },
      { store, logger: logs.logger, clock: () => 1_000_000, settings: { watches: TEST_WATCH_SETTINGS } },
    );
    const before = store.statements();
    const checkers = await parts.checkersOf([
      installationId('T0A'),
      installationId('T0B'),
      installationId('T0GONE'),
      installationId('T0BAD'),
    ]);
    // No read of the rejected keys beside the summaries': the one rejected key's probe alone (its state, then the probe taken).
    expect(store.statements() - before).toBe(2);
    expect(summariesAsked).toEqual([['T0A', 'T0B', 'T0GONE', 'T0BAD']]);
    expect(new Map(given)).toEqual(
      new Map([
        ['T0A', summary('T0A')],
        ['T0B', summary('T0B')],
        ['T0GONE', undefined],
        // Its probe taken, the rejected key's part is made from the claim's read too: no second read.
        ['T0BAD', summary('T0BAD')],
      ]),
    );
    for (const [id, checker] of checkers) await checker.check({ invoice_id: `I-${id}` } as ClaimedCheck);
    expect(new Map(told)).toEqual(
      new Map([
        ['T0A', { keyRejected: false }],
        ['T0B', { keyRejected: false }],
        ['T0GONE', { keyRejected: false }],
        ['T0BAD', { keyRejected: true }],
      ]),
    );
  });

  it('leaves out an installation that cannot be made (its token not opening, say), logged, and serves the others of the claim', async () => {
    const logs = captureLogs();
    const checked: string[] = [];
    const parts = backgroundParts(
      {
        partOf: async (id) => {
          if (id === 'T0BROKEN') throw new Error('the sealed token does not open');
          return {
            checker: {
              check: async () => {
                checked.push(id);
                return { outcome: 'unchanged' };
              },
            },
          } as unknown as Tenant;
        },
        summariesOf: async (ids) => new Map(ids.map((id) => [id, summary(id)])),
      },
      { store, logger: logs.logger, clock: () => 1_000_000, settings: { watches: TEST_WATCH_SETTINGS } },
    );
    const checkers = await parts.checkersOf([
      installationId('T0A'),
      installationId('T0BROKEN'),
      installationId('T0B'),
    ]);
    expect([...checkers.keys()].sort()).toEqual(['T0A', 'T0B']);
    for (const checker of checkers.values()) await checker.check({ invoice_id: 'I-1' } as ClaimedCheck);
    expect(checked.sort()).toEqual(['T0A', 'T0B']);
    const warned = logs.lines.filter((l) => l.level === 'warn');
    expect(warned).toEqual([
      expect.objectContaining({
        installation: 'T0BROKEN',
        msg: 'could not serve an installation’s background work',
      }),
    ]);
  });
});
