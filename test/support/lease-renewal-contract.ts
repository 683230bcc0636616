import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { enqueue } from '../../src/outbox.js';
import { OUTBOX } from '../../src/outbox-claim.js';
import {
  LeaseLost,
  leaseQueue,
  releaseHeld,
  releasing,
  renewLeases,
  writeHeld,
} from '../../src/runner/leases.js';
import type { Store } from '../../src/store/database.js';
import { ONE_WORKSPACE } from '../../src/store/keys.js';

/** Renewing, fencing and giving back the leases of running work, the same on each database the bot supports. */
export function leaseRenewalContract(name: string, open: () => Promise<Store>): void {
  describe(`the runner's leases on ${name}`, () => {
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

    const rows = async () =>
      await store.db
        .selectFrom('outbox')
        .select(['id', 'attempts', 'next_attempt_at'])
        .orderBy('id')
        .execute();

    it('writes a claimed row only while its claim holds it, and lets the lease go unless the work goes on', async () => {
      const [first, second] = await rows();
      if (!first || !second) throw new Error('no rows');
      expect(await writeHeld(store.db, OUTBOX, { id: first.id }, 'i/claim-2', { attempts: 7 })).toBe(false);
      expect(
        await writeHeld(store.db, OUTBOX, { id: first.id }, 'i/claim-1', { attempts: 7 }, { keep: true }),
      ).toBe(true);
      expect(await writeHeld(store.db, OUTBOX, { id: second.id }, 'i/claim-1', { attempts: 8 })).toBe(true);
      expect((await rows()).map((r) => r.attempts)).toEqual([7, 8, 0, 0]);
      expect(await leases()).toEqual(['i/claim-1:1000', 'null:null', 'i/claim-2:1000', 'null:null']);
      // Let go, the row is written by nobody under the old token any more: the transaction rolls back.
      await expect(
        store.transaction((trx) => releaseHeld(trx, OUTBOX, { id: second.id }, 'i/claim-1', { attempts: 9 })),
      ).rejects.toBeInstanceOf(LeaseLost);
      expect((await rows())[1]?.attempts).toBe(8);
    });

    it('gives a row back due again later, or, for a queue that holds, held from everyone and still due when it was', async () => {
      const [first, , third] = await store.db.selectFrom('outbox').selectAll().orderBy('id').execute();
      if (!first || !third) throw new Error('no rows');
      await leaseQueue(store, OUTBOX).giveBack(first, 'i/claim-2', 50_000); // not its holder: nothing
      await leaseQueue(store, OUTBOX).giveBack(first, 'i/claim-1', 50_000);
      await leaseQueue(store, { ...OUTBOX, holds: true }).giveBack(third, 'i/claim-2', 50_000);
      expect((await rows()).map((r) => r.next_attempt_at)).toEqual([50_000, 0, 0, 0]);
      expect(await leases()).toEqual(['null:null', 'i/claim-1:1000', 'i/claim-2/held:50000', 'null:null']);
      // The claim's other items still running: their renewal does not shorten the hold.
      await renewLeases(store.db, 'outbox', ['i/claim-2'], 5_000, 30_000);
      expect((await leases())[2]).toBe('i/claim-2/held:50000');
    });

    it('writes none of what a value leaves undefined, and records a batch only with every column typed', async () => {
      const [first] = await store.db.selectFrom('outbox').selectAll().orderBy('id').execute();
      if (!first) throw new Error('no rows');
      const held = (values: { attempts?: number; result?: string | undefined }) =>
        writeHeld(store.db, OUTBOX, { id: first.id }, 'i/claim-1', values, { keep: true });
      await held({ result: 'posting' });
      await held({ attempts: 3, result: undefined });
      expect(
        (
          await store.db
            .selectFrom('outbox')
            .select(['attempts', 'result'])
            .where('id', '=', first.id)
            .execute()
        )[0],
      ).toEqual({
        attempts: 3,
        result: 'posting',
      });
      const batch = [{ row: first, owner: 'i/claim-1', values: { attempts: 4, result: 'sent' } }];
      await expect(
        releasing(OUTBOX, { id: 'bigint', attempts: 'bigint' }, [])(store.db, batch),
      ).rejects.toThrow('releasing: no type for result');
      await expect(releasing(OUTBOX, { id: 'bigint' }, [])(store.db, batch)).rejects.toThrow(
        'releasing: no type for attempts, result',
      );
      expect(() => releasing(OUTBOX, { attempts: 'bigint' }, [])).toThrow('releasing: no type for id');
      expect(
        await releasing(OUTBOX, { id: 'bigint', attempts: 'bigint', result: 'text' }, [])(store.db, batch),
      ).toEqual([true]);
      expect(await leases()).toEqual(['null:null', 'i/claim-1:1000', 'i/claim-2:1000', 'null:null']);
    });
  });
}
