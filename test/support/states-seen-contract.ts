import { describe, expect, it } from 'vitest';
import { KEEP_HISTORY_MS } from '../../src/feed/poll.js';
import type { Store } from '../../src/store/database.js';
import { installationId, ONE_WORKSPACE } from '../../src/store/keys.js';
import { KEPT_STATES, recordState, statesSeen } from '../../src/watches/states-seen.js';
import { INVOICE_ID, NOW } from './factories.js';

/** The states a watch saw (issue 41), on each database: the order is the database's, the rows bounded. */
export function statesSeenContract(name: string, fresh: () => Promise<Store>): void {
  describe(`the states seen, on ${name}`, () => {
    it('keeps one row for a repeat of the last state, and only the latest KEPT_STATES, in the order seen', async () => {
      const store = await fresh();
      // Clocks going back do not reorder them: the ids do.
      const at = NOW.getTime();
      await store.transaction(async (trx) => {
        for (let i = 0; i < KEPT_STATES + 5; i += 1) {
          const state = { id: INVOICE_ID, status: 'open', payStatus: `step_${i}` };
          await recordState(trx, ONE_WORKSPACE, state, at - i);
          await recordState(trx, ONE_WORKSPACE, state, at - i);
        }
      });
      const seen = await statesSeen(store.db, ONE_WORKSPACE, INVOICE_ID);
      expect(seen.map((s) => s.payStatus)).toEqual(
        Array.from({ length: KEPT_STATES }, (_, i) => `step_${i + 5}`),
      );
      expect(seen[0]?.at).toEqual(new Date(at - 5));
      await store.close();
    });

    it('forgets an unwatched invoice’s states older than the feed’s history, keeping a watched one’s and other installations’', async () => {
      const store = await fresh();
      const other = installationId('T0OTHER');
      const at = NOW.getTime();
      const state = (id: string, payStatus = 'none') => ({ id, status: 'open', payStatus });
      await store.db
        .insertInto('watched_invoices')
        .values({
          installation_id: ONE_WORKSPACE,
          invoice_id: 'watched',
          snapshot: '{}',
          failures: 0,
          watched_since: at,
          next_poll_at: at,
        })
        .execute();
      await store.transaction(async (trx) => {
        for (const id of ['unwatched', 'recent', 'watched'])
          await recordState(trx, ONE_WORKSPACE, state(id), at);
        await recordState(trx, other, state('unwatched'), at);
        await recordState(trx, ONE_WORKSPACE, state('recent', 'paid'), at + KEEP_HISTORY_MS);
        await recordState(trx, ONE_WORKSPACE, state('later'), at + KEEP_HISTORY_MS + 1);
      });
      const statuses = async (installation: typeof other, id: string) =>
        (await statesSeen(store.db, installation, id)).map((s) => s.payStatus);
      expect(await statuses(ONE_WORKSPACE, 'unwatched')).toEqual([]);
      // Each row by its own age: the newer state stays.
      expect(await statuses(ONE_WORKSPACE, 'recent')).toEqual(['paid']);
      expect(await statuses(ONE_WORKSPACE, 'watched')).toEqual(['none']);
      expect(await statuses(other, 'unwatched')).toEqual(['none']);
      await store.close();
    });

    it('keeps each installation’s states apart', async () => {
      const store = await fresh();
      const other = installationId('T0OTHER');
      await store.transaction(async (trx) => {
        await recordState(trx, ONE_WORKSPACE, { id: INVOICE_ID, status: 'open', payStatus: 'none' }, 1);
        await recordState(trx, other, { id: INVOICE_ID, status: 'closed', payStatus: 'paid' }, 2);
      });
      expect((await statesSeen(store.db, other, INVOICE_ID)).map((s) => s.status)).toEqual(['closed']);
      expect((await statesSeen(store.db, ONE_WORKSPACE, INVOICE_ID)).map((s) => s.status)).toEqual(['open']);
      await store.close();
    });
  });
}
