import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { enqueue } from '../../src/outbox.js';
import type { Store } from '../../src/store/database.js';
import { ONE_WORKSPACE } from '../../src/store/keys.js';
import { renewLeases } from '../../src/store/lease.js';

/** Renewing the leases of running work, the same on each database the bot supports. */
export function leaseRenewalContract(name: string, open: () => Promise<Store>): void {
  describe(`renewing leases on ${name}`, () => {
    let store: Store;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store.close();
    });
    beforeEach(async () => {
      await store.db.deleteFrom('outbox').execute();
      const message = { text: 'Paid', blocks: [] };
      await store.transaction((trx) =>
        enqueue(
          trx,
          ['C1', 'C2', 'C3', 'C4'].map((channel) => ({ channel, message })),
          0,
          ONE_WORKSPACE,
        ),
      );
      const owners = ['i/claim-1', 'i/claim-1', 'i/claim-2', null];
      const rows = await store.db.selectFrom('outbox').select('id').orderBy('id').execute();
      for (const [n, row] of rows.entries())
        await store.db
          .updateTable('outbox')
          .set({ lease_owner: owners[n] ?? null, lease_until: owners[n] ? 1_000 : null })
          .where('id', '=', row.id)
          .execute();
    });
    const leases = async () =>
      (
        await store.db.selectFrom('outbox').select(['lease_owner', 'lease_until']).orderBy('id').execute()
      ).map((r) => `${r.lease_owner}:${r.lease_until}`);

    it('leases every row still held by a token until now + the lease, and says which tokens still hold one', async () => {
      const kept = await renewLeases(store.db, 'outbox', ['i/claim-1', 'i/claim-gone'], 5_000, 30_000);
      expect([...kept]).toEqual(['i/claim-1']);
      expect(await leases()).toEqual(['i/claim-1:35000', 'i/claim-1:35000', 'i/claim-2:1000', 'null:null']);
    });

    it('renews a lease that ran out but was taken by nobody since: the token is the fence, not the time', async () => {
      expect([...(await renewLeases(store.db, 'outbox', ['i/claim-2'], 90_000, 30_000))]).toEqual([
        'i/claim-2',
      ]);
      expect(await renewLeases(store.db, 'outbox', [], 90_000, 30_000)).toEqual(new Set());
      expect((await leases())[2]).toBe('i/claim-2:120000');
    });
  });
}
