import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/database.js';
import { installationId } from '../../src/store/keys.js';
import { type WatchRow, watchQueries } from '../../src/watches/queries.js';
import { checkClaims } from '../../src/watches/queries-checks.js';
import { emptyWork } from './empty-store.js';

/**
 * A claim's reads and a batch's record, as one statement each, on each database: the watches a
 * claimed check decides from, and the record of many quiet checks fenced by their own tokens.
 */
export function checkBatchContract(name: string, open: () => Promise<Store>): void {
  describe(`a batch of checks on ${name}`, () => {
    let store: Store;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store.close();
    });
    beforeEach(async () => {
      await emptyWork(store);
    });

    const watch = (
      id: string,
      invoice: string,
      state: WatchRow['state'],
    ): Omit<WatchRow, 'installation_id'> => ({
      id,
      team_id: 'T1',
      channel_id: `C-${id}`,
      invoice_id: invoice,
      watcher_id: 'U1',
      card_ts: '1.1',
      thread_ts: '1.1',
      state,
      started_at: 1_795_262_400_000,
      ends_at: 1_795_867_200_000,
      ended_at: null,
      end_reason: null,
    });

    /** Two installations, each watching invoices; every check claimed by `owner`. */
    async function claimed(owner: string) {
      for (const installation of ['A', 'B'].map(installationId)) {
        const q = watchQueries(store, installation);
        await store.transaction(async (trx) => {
          await q.insert(trx, watch(`${installation}-2`, 'i-1', 'active'), '{"v":1}', 0);
          await q.insert(trx, watch(`${installation}-1`, 'i-1', 'active'), '{"v":1}', 0);
          await q.insert(trx, watch(`${installation}-3`, 'i-2', 'pending'), '{"v":2}', 0);
        });
      }
      await store.db.updateTable('watches').set({ state: 'ended' }).where('id', '=', 'B-1').execute();
      return checkClaims(store).claimDue(owner, 1, 10, 10_000);
    }

    it('reads the pending and active watches of every claimed check at once, each with its own invoice’s, in id order', async () => {
      const rows = await checkClaims(store).withWatches(await claimed('a'));
      const seen = Object.fromEntries(
        rows.map((r) => [`${r.installation_id}/${r.invoice_id}`, r.watches.map((w) => `${w.id} ${w.state}`)]),
      );
      expect(seen).toEqual({
        'A/i-1': ['A-1 active', 'A-2 active'],
        'A/i-2': ['A-3 pending'],
        'B/i-1': ['B-2 active'],
        'B/i-2': ['B-3 pending'],
      });
      expect(await checkClaims(store).withWatches([])).toEqual([]);
    });

    it('records many checks in one statement, each only for its own lease’s holder, keeping a snapshot not read', async () => {
      const rows = await claimed('a');
      const [first, second, third] = rows;
      if (!first || !second || !third) throw new Error('three claimed checks');
      const recorded = await checkClaims(store).completeMany([
        {
          row: first,
          owner: 'a',
          values: { snapshot: '{"v":9}', next_poll_at: 500, failures: 0, failing_since: null },
        },
        {
          row: second,
          owner: 'someone-else',
          values: { next_poll_at: 600, failures: 0, failing_since: null },
        },
        { row: third, owner: 'a', values: { next_poll_at: 700, failures: 2, failing_since: 42 } },
      ]);
      expect(recorded).toEqual([true, false, true]);
      const after = await store.db.selectFrom('watched_invoices').selectAll().execute();
      const of = (r: typeof first) =>
        after.find((x) => x.installation_id === r.installation_id && x.invoice_id === r.invoice_id);
      expect(of(first)).toMatchObject({
        snapshot: '{"v":9}',
        next_poll_at: 500,
        failures: 0,
        lease_owner: null,
        lease_until: null,
      });
      expect(of(second)).toMatchObject({ next_poll_at: second.next_poll_at, lease_owner: 'a' });
      expect(of(third)).toMatchObject({
        snapshot: third.snapshot,
        next_poll_at: 700,
        failures: 2,
        failing_since: 42,
        lease_owner: null,
      });
      expect(await checkClaims(store).completeMany([])).toEqual([]);
    });

    it('tells two checks apart whose installation and invoice read the same run together', async () => {
      for (const [installation, invoice] of [
        ['A', 'Bi-1'],
        ['AB', 'i-1'],
      ] as const) {
        const q = watchQueries(store, installationId(installation));
        await store.transaction((trx) =>
          q.insert(trx, watch(`${installation}-1`, invoice, 'active'), '{}', 0),
        );
      }
      const rows = await checkClaims(store).claimDue('a', 1, 10, 10_000);
      const values = { next_poll_at: 500, failures: 0, failing_since: null };
      const recorded = await checkClaims(store).completeMany(
        rows.map((row) => ({ row, owner: row.installation_id === 'A' ? 'a' : 'someone-else', values })),
      );
      expect(rows.map((r) => r.installation_id)).toHaveLength(2);
      expect(recorded).toEqual(rows.map((r) => r.installation_id === 'A'));
    });
  });
}
