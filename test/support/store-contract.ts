import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { enqueue, outboxBacklog } from '../../src/outbox.js';
import { leaseQueue } from '../../src/runner/leases.js';
import { serviceState } from '../../src/service-state.js';
import type { Store } from '../../src/store/database.js';
import { firstSight } from '../../src/store/events.js';
import { installationId, ONE_WORKSPACE } from '../../src/store/keys.js';
import { migrationProvider } from '../../src/store/migrations.js';
import { paceInterval, reserveSlot } from '../../src/store/pace.js';
import { type WatchRow, watchQueries } from '../../src/watches/queries.js';
import { CHECKS, checkClaims } from '../../src/watches/queries-checks.js';
import { captureLogs } from './bolt.js';
import { emptyWork } from './empty-store.js';
import { recordingPoster } from './fake-slack.js';
import { installed } from './installations-contract.js';
import { outboxOf } from './jobs.js';

/**
 * What the bot needs of its store, run against each database it supports: the same queries
 * must mean the same on SQLite and on PostgreSQL (leases, fencing, ordering, uniqueness, numbers).
 */
/** The one workspace's watch queries and the checks across installations, side by side. */
/** An installation's watch queries and the claims across all, by the installation's raw id (the one workspace's unless told). */
const watchesOf = (store: Store, installation = '') => {
  // The queries are methods: an object whose prototype they are on keeps them, with the claims beside.
  const queries = watchQueries(store, installationId(installation));
  return Object.assign(Object.create(queries) as typeof queries, checkClaims(store));
};

export function storeContract(name: string, open: () => Promise<Store>): void {
  describe(`the store on ${name}`, () => {
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

    const watch = (overrides: Partial<WatchRow> = {}): Omit<WatchRow, 'installation_id'> => ({
      id: `w-${Math.random()}`,
      team_id: 'T1',
      channel_id: 'C1',
      invoice_id: 'i-1',
      watcher_id: 'U1',
      card_ts: '1.1',
      thread_ts: '1.1',
      state: 'active',
      started_at: 1_795_262_400_000,
      ends_at: 1_795_867_200_000,
      ended_at: null,
      end_reason: null,
      ...overrides,
    });

    it('applies its migrations once however often it is opened', async () => {
      // One after the other: a SQLite file is opened by one store at a time.
      await store.close();
      await (await open()).close();
      store = await open();
      const { n } = await store.db
        .selectFrom('kysely_migration' as never)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      const known = Object.keys(await migrationProvider(store.dialect).getMigrations());
      expect(Number(n)).toBe(known.length);
      expect(known.length).toBeGreaterThanOrEqual(2);
    });

    it('on SQLite, a start takes over the checks a dead process had claimed; on PostgreSQL their leases stand', async () => {
      await store.transaction((trx) => watchesOf(store).insert(trx, watch(), '{}', 0));
      expect(await watchesOf(store).claimDue('gone', 0, 10, 30_000)).toHaveLength(1);
      // SQLite: the process that claimed them stopped (one store at a time); PostgreSQL: a second instance starts.
      if (store.dialect === 'sqlite') await store.close();
      const next = await open();
      const claimed = await watchesOf(next).claimDue('next', 1, 10, 30_000);
      if (store.dialect === 'sqlite') store = next;
      else await next.close();
      expect(claimed.map((r) => r.invoice_id)).toEqual(store.dialect === 'sqlite' ? ['i-1'] : []);
    });

    it('reads times back as numbers, every millisecond kept', async () => {
      const q = watchesOf(store);
      await store.transaction((trx) => q.insert(trx, watch(), '{}', 1_795_262_400_123));
      const [row] = await q.claimDue('me', 1_795_262_400_123, 10, 30_000);
      expect(row?.next_poll_at).toBe(1_795_262_400_123);
      expect(row?.lease_until).toBe(1_795_262_430_123);
      expect(typeof row?.watched_since).toBe('number');
    });

    it('counts what the outbox holds, and since when the oldest waits, as numbers', async () => {
      expect(await outboxBacklog(store)).toEqual({ pending: 0, oldestAt: undefined });
      const message = { text: 'x', blocks: [] };
      await store.transaction((trx) =>
        enqueue(trx, [{ channel: 'C1', message }], 1_795_262_400_123, ONE_WORKSPACE),
      );
      await store.transaction((trx) =>
        enqueue(trx, [{ channel: 'C2', message }], 1_795_262_460_000, ONE_WORKSPACE),
      );
      expect(await outboxBacklog(store)).toEqual({ pending: 2, oldestAt: 1_795_262_400_123 });
    });

    it('keeps one active watch per invoice per channel, and allows another once it ended', async () => {
      const q = watchesOf(store);
      const first = watch();
      await store.transaction((trx) => q.insert(trx, first, '{}', 0));
      await expect(store.transaction((trx) => q.insert(trx, watch(), '{}', 0))).rejects.toThrow();
      await store.transaction((trx) => q.end(trx, first.id, 'stopped', 5));
      await store.transaction((trx) => q.insert(trx, watch(), '{}', 0));
      expect(await q.countActive('C1')).toBe(1);
    });

    it('claims only due, unleased checks, oldest first, up to the limit, and an expired lease again', async () => {
      const q = watchesOf(store);
      for (const [i, due] of [30, 10, 20, 99].entries()) {
        await store.transaction((trx) =>
          q.insert(trx, watch({ invoice_id: `i-${i}`, channel_id: `C${i}` }), '{}', due),
        );
      }
      expect((await q.claimDue('a', 50, 2, 100)).map((r) => r.invoice_id)).toEqual(['i-1', 'i-2']);
      expect((await q.claimDue('b', 50, 10, 100)).map((r) => r.invoice_id)).toEqual(['i-0']);
      expect((await q.claimDue('b', 149, 10, 100)).map((r) => r.invoice_id)).toEqual(['i-3']);
      expect((await q.claimDue('c', 151, 10, 100)).map((r) => r.invoice_id)).toEqual(['i-1', 'i-2', 'i-0']);
    });

    it('shares each claim evenly between installations with due checks, the longest overdue first', async () => {
      // A big installation with 50 checks due long ago, and two small ones with one each.
      const big = watchesOf(store, 'T0BIG');
      await store.transaction(async (trx) => {
        for (let i = 0; i < 50; i += 1)
          await big.insert(trx, watch({ invoice_id: `b-${i}`, channel_id: `C${i}` }), '{}', i);
      });
      await store.transaction((trx) => watchesOf(store, 'T0SMALL').insert(trx, watch(), '{}', 60));
      await store.transaction((trx) => watchesOf(store, '').insert(trx, watch(), '{}', 70));
      const claimed = await big.claimDue('a', 100, 8, 1000);
      // While others have checks due, the big one has at most two of this instance's slots.
      expect(claimed.map((r) => `${r.installation_id}:${r.invoice_id}`)).toEqual([
        'T0BIG:b-0',
        'T0BIG:b-1',
        'T0SMALL:i-1',
        ':i-1',
      ]);
      // Returned longest overdue first, whichever installation.
      await store.transaction((trx) => watchesOf(store, 'T0LATE').insert(trx, watch(), '{}', 1));
      expect(
        (await big.claimDue('z', 100, 3, 1000, new Map([['T0BIG', 1]]))).map(
          (r) => `${r.installation_id}:${r.invoice_id}`,
        ),
      ).toEqual(['T0LATE:i-1', 'T0BIG:b-2']);
      await store.db
        .updateTable('watched_invoices')
        .set({ lease_owner: null, lease_until: null })
        .where('lease_owner', '=', 'z')
        .execute();
      await store.db
        .deleteFrom('watched_invoices')
        .where('installation_id', '=', installationId('T0LATE'))
        .execute();
      // Alone with due checks, it may have them all; still running two here, it has none while
      // another installation's are due.
      expect((await big.claimDue('b', 100, 3, 1000)).map((r) => r.invoice_id)).toEqual(['b-2', 'b-3', 'b-4']);
      await store.transaction((trx) => watchesOf(store, 'T0OTHER').insert(trx, watch(), '{}', 90));
      const busy = new Map([['T0BIG', 2]]);
      expect((await big.claimDue('c', 100, 8, 1000, busy)).map((r) => r.installation_id)).toEqual([
        'T0OTHER',
      ]);
    });

    it('gives a claimed check back only for its lease holder, and knows when the next unleased one is due', async () => {
      const q = watchesOf(store, 'T0BACK');
      expect(await q.nextDueAt(0)).toBeUndefined();
      await store.transaction(async (trx) => {
        await q.insert(trx, watch({ invoice_id: 'i-0', channel_id: 'C0' }), '{}', 20);
        await q.insert(trx, watch({ invoice_id: 'i-1', channel_id: 'C1' }), '{}', 10);
      });
      expect(await q.nextDueAt(5)).toBe(10);
      const [row] = await q.claimDue('a', 15, 1, 100);
      expect(row?.invoice_id).toBe('i-1');
      expect(await q.nextDueAt(15)).toBe(20);
      if (!row) return;
      await leaseQueue(store, CHECKS).giveBack(row, 'b', 500);
      expect(await q.nextDueAt(15)).toBe(20);
      await leaseQueue(store, CHECKS).giveBack(row, 'a', 500);
      expect((await q.claimDue('c', 30, 5, 100)).map((r) => r.invoice_id)).toEqual(['i-0']);
      expect(await q.nextDueAt(30)).toBe(500);
      // i-1 waits for 500; i-0's lease ran out at 130.
      expect((await q.claimDue('d', 499, 5, 100)).map((r) => r.invoice_id)).toEqual(['i-0']);
    });

    it('takes no more than the limit, however many installations have checks due', async () => {
      for (const [i, id] of ['T0A', 'T0B', 'T0C', 'T0D'].entries())
        await store.transaction((trx) => watchesOf(store, id).insert(trx, watch(), '{}', 10 - i));
      const claimed = await watchesOf(store).claimDue('a', 100, 2, 1000);
      expect(claimed.map((r) => r.installation_id)).toEqual(['T0D', 'T0C']);
    });

    it('claims again what another instance took first, keeping each installation to its share', async () => {
      const a = watchesOf(store, 'T0A');
      const b = watchesOf(store, 'T0B');
      await store.transaction(async (trx) => {
        for (let i = 0; i < 4; i += 1) {
          await a.insert(trx, watch({ invoice_id: `a-${i}`, channel_id: `C${i}` }), '{}', i);
          await b.insert(trx, watch({ invoice_id: `b-${i}`, channel_id: `C${i}` }), '{}', i);
        }
      });
      // Both read at once and choose the oldest of each (x two, y four); whoever leases second
      // reads again for what it lost, still two of each installation at most.
      const [x, y] = await Promise.all([a.claimDue('x', 100, 2, 1000), a.claimDue('y', 100, 6, 1000)]);
      const all = [...(x ?? []), ...(y ?? [])].map((r) => `${r.installation_id}:${r.invoice_id}`);
      expect(new Set(all).size).toBe(6);
      expect([x?.length, y?.length]).toEqual([2, 4]);
      for (const claim of [x, y])
        for (const id of ['T0A', 'T0B'])
          expect(claim?.filter((r) => r.installation_id === id).length).toBeLessThanOrEqual(2);
    });

    it('spaces one key’s background calls by its pace, whichever of two instances reserves them', async () => {
      // Two instances: on PostgreSQL two stores (two pools); SQLite is one process's, so one.
      const other = store.dialect === 'postgres' ? await open() : store;
      await installed(store, 'T0PACE', 'T0OTHER');
      try {
        const rps = 5;
        const at = 1_795_262_400_000;
        // 40 calls asked for at the same moment from both, all at once: far more than the budget.
        const slots = await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            reserveSlot(i % 2 === 0 ? store : other, installationId('T0PACE'), at, paceInterval(rps)),
          ),
        );
        // Another key's budget is its own.
        expect(await reserveSlot(other, installationId('T0OTHER'), at, paceInterval(rps))).toBe(at);
        slots.sort((a, b) => a - b);
        // Every call has its own slot, 250 ms after the one before: no 1000 ms holds more than rps.
        expect(slots).toEqual(Array.from({ length: 40 }, (_, i) => at + i * 250));
        for (let i = rps; i < slots.length; i += 1)
          expect((slots[i] as number) - (slots[i - rps] as number)).toBeGreaterThanOrEqual(1000);
        // A key idle for a while starts again at once, not at its last reserved slot.
        const later = (slots.at(-1) as number) + 5000;
        expect(await reserveSlot(store, installationId('T0PACE'), later, paceInterval(rps))).toBe(later);
      } finally {
        if (other !== store) await other.close();
      }
    });

    it('claims an installation’s checks only while its key can start them soon, and no more than it can', async () => {
      const busy = watchesOf(store, 'T0BUSY');
      const idle = watchesOf(store, 'T0IDLE');
      await store.transaction(async (trx) => {
        for (let i = 0; i < 20; i += 1) {
          await busy.insert(trx, watch({ invoice_id: `b-${i}`, channel_id: `C${i}` }), '{}', i);
          await idle.insert(trx, watch({ invoice_id: `d-${i}`, channel_id: `C${i}` }), '{}', 100 + i);
        }
      });
      const at = 1_000_000;
      await installed(store, 'T0BUSY');
      // T0BUSY's key has its calls reserved 1.5 s ahead; T0IDLE's none.
      for (let i = 0; i < 8; i += 1) await reserveSlot(store, installationId('T0BUSY'), at, 200);
      const first = await idle.claimDue('a', at, 20, 100_000, new Map(), 200);
      // T0IDLE alone can be served: 5 calls in the next second at 200 ms apart, whatever the limit.
      expect(first.map((r) => r.invoice_id)).toEqual(['d-0', 'd-1', 'd-2', 'd-3', 'd-4']);
      // Its checks running here count against what it can start.
      const running = new Map([['T0IDLE', 5]]);
      expect(await idle.claimDue('a', at, 20, 100_000, running, 200)).toEqual([]);
      // 800 ms later T0BUSY's next free call (at + 1.6 s) is within the horizon, with room for one before it.
      const later = await idle.claimDue('b', at + 800, 20, 100_000, running, 200);
      expect(later.map((r) => r.invoice_id)).toEqual(['b-0']);
      // Without a pace kept in the store (one workspace), the shares alone: two each while both have checks due.
      expect((await idle.claimDue('c', at + 800, 30, 100_000)).map((r) => r.invoice_id)).toEqual([
        'b-1',
        'b-2',
        'd-5',
        'd-6',
      ]);
    });

    it('keeps each installation’s watches its own: the same channel and invoice in two is two watches', async () => {
      const one = watchesOf(store, 'T0ONE');
      const two = watchesOf(store, 'T0TWO');
      const mine = watch();
      await store.transaction((trx) => one.insert(trx, mine, '{"one":1}', 0));
      await store.transaction((trx) => two.insert(trx, watch(), '{"two":2}', 0));
      expect(await one.countActive('C1')).toBe(1);
      expect(await two.countActive('C1')).toBe(1);
      expect(await two.byId(mine.id)).toBeUndefined();
      expect(await store.transaction((trx) => two.end(trx, mine.id, 'stopped', 1))).toBe(false);
      expect(await one.lastSnapshot(store.db, 'i-1')).toBe('{"one":1}');
      expect(await two.lastSnapshot(store.db, 'i-1')).toBe('{"two":2}');
      expect((await one.listInChannel('C1')).map((w) => w.snapshot)).toEqual(['{"one":1}']);
    });

    it('gives each due check to one claimer only, however many claim at once', async () => {
      const q = watchesOf(store);
      await store.transaction(async (trx) => {
        for (let i = 0; i < 60; i += 1)
          await q.insert(trx, watch({ invoice_id: `i-${i}`, channel_id: `C${i}` }), '{}', 0);
      });
      const claims = await Promise.all(
        Array.from({ length: 6 }, (_, i) => q.claimDue(`c${i}`, 1, 15, 10_000)),
      );
      const all = claims.flat().map((r) => r.invoice_id);
      expect(all).toHaveLength(60);
      expect(new Set(all).size).toBe(60);
    });

    it('records a check only for the holder of its lease', async () => {
      const q = watchesOf(store);
      await store.transaction((trx) => q.insert(trx, watch(), '{}', 0));
      await q.claimDue('a', 1, 1, 10);
      await q.claimDue('b', 20, 1, 10);
      expect(
        await store.transaction((trx) => q.complete(trx, 'a', 'i-1', { next_poll_at: 5, failures: 0 })),
      ).toBe(false);
      expect(
        await store.transaction((trx) => q.complete(trx, 'b', 'i-1', { next_poll_at: 5, failures: 3 })),
      ).toBe(true);
      expect((await q.claimDue('c', 6, 1, 10))[0]?.failures).toBe(3);
    });

    it('rolls a transaction back whole when it throws', async () => {
      const q = watchesOf(store);
      await expect(
        store.transaction(async (trx) => {
          await q.insert(trx, watch(), '{}', 0);
          throw new Error('changed my mind');
        }),
      ).rejects.toThrow('changed my mind');
      expect(await q.countAllActive()).toBe(0);
    });

    it('forgets an invoice only when no active watch is left', async () => {
      const q = watchesOf(store);
      const a = watch({ channel_id: 'C1' });
      const b = watch({ channel_id: 'C2' });
      await store.transaction(async (trx) => {
        await q.insert(trx, a, '{}', 0);
        await q.insert(trx, b, '{}', 0);
      });
      await store.transaction(async (trx) => {
        await q.end(trx, a.id, 'stopped', 1);
        await q.forgetIfUnwatched(trx, 'i-1');
      });
      expect(await q.dueCount(10)).toBe(1);
      await store.transaction(async (trx) => {
        await q.end(trx, b.id, 'stopped', 1);
        await q.forgetIfUnwatched(trx, 'i-1');
      });
      expect(await q.dueCount(10)).toBe(0);
    });

    it('hands out only the head of each outbox lane, in order', async () => {
      const message = { text: 't', blocks: [] };
      await store.transaction((trx) =>
        enqueue(
          trx,
          [
            { channel: 'C1', message },
            { channel: 'C1', message },
            { channel: 'C2', message },
          ],
          0,
          ONE_WORKSPACE,
        ),
      );
      const poster = recordingPoster();
      const job = outboxOf({
        store,
        posterOf: async () => poster,
        logger: captureLogs().logger,
        clock: () => 0,
        owner: 'x',
      });
      const first = await job.claim(0, 10);
      expect(first.map((r) => r.channel)).toEqual(['C1', 'C2']);
      expect(await job.claim(0, 10)).toEqual([]);
      for (const row of first) await job.run(row);
      expect((await job.claim(0, 10)).map((r) => r.channel)).toEqual(['C1']);
    });

    it('sees an event id the first time only', async () => {
      expect(await firstSight(store, 'event:Ev1', 0)).toBe(true);
      expect(await firstSight(store, 'event:Ev1', 1)).toBe(false);
      expect(await firstSight(store, 'event:Ev2', 2)).toBe(true);
      expect(await firstSight(store, 'event:Ev1', 60 * 60_000 + 2)).toBe(true); // forgotten after an hour
    });

    it('flips the key state once in each direction', async () => {
      const logs = captureLogs();
      const state = serviceState(store, logs.logger, { installation: ONE_WORKSPACE });
      await state.markKeyRejected(5);
      await state.markKeyRejected(6);
      expect(await state.keyRejectedSince()).toBe(5);
      await state.markKeyAccepted();
      await state.markKeyAccepted();
      expect(logs.lines.map((l) => l.level)).toEqual(['error', 'info']);
    });
  });
}
