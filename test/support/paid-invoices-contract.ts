import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { paidInvoiceQueries } from '../../src/feed/paid-invoices.js';
import type { Commit, Store } from '../../src/store/database.js';
import { installationId } from '../../src/store/keys.js';
import type { Tables } from '../../src/store/schema.js';
import { invoiceSightings } from '../../src/watches/invoices-seen.js';
import { invoice, invoiceId } from './factories.js';

/**
 * What the store keeps of the invoices an installation saw paid, and how a feed channel reads
 * them (issue 40, point 5), on each database the bot supports.
 */

const HOME = installationId('T0HOME');
const OTHER = installationId('T0OTHER');
const T = 1_795_000_000_000;
const HOUR = 3_600_000;
const open = invoice({ id: invoiceId('11111111-2222-4333-8444-555555555555'), title: 'Order #7' });
const paid = { ...open, payStatus: 'paid', status: 'closed' };

export function paidInvoicesContract(name: string, fresh: () => Promise<Store>): void {
  describe(`invoices seen paid on ${name}`, () => {
    it('records a watched invoice that turns paid once in each watching channel, and names it in one post of each', async () => {
      const store = await fresh();
      const seen = invoiceSightings(HOME);
      const feed = paidInvoiceQueries(HOME);
      await store.transaction((trx) => seen.checked(trx, open, open, ['G0A'], T));
      await store.transaction((trx) => seen.checked(trx, open, paid, ['G0A', 'G0B', 'G0A'], T + HOUR));
      await store.transaction((trx) => seen.checked(trx, open, paid, ['G0A'], T + 2 * HOUR));

      const post = await store.transaction((trx) => feed.forPost(trx, 'G0A', T));
      expect(post.total).toBe(1);
      expect(post.shown[0]).toMatchObject({
        title: 'Order #7',
        amount: '149.99',
        currency: 'USDT',
        how: 'watched',
      });
      expect(post.shown[0]?.paidAt).toEqual(new Date(T + HOUR));
      expect((await store.transaction((trx) => feed.forPost(trx, 'G0A', T))).total).toBe(0);
      expect((await store.transaction((trx) => feed.forPost(trx, 'G0B', T))).total).toBe(1);
      // Another installation's feed in a channel of the same id sees none of it.
      expect((await store.transaction((trx) => paidInvoiceQueries(OTHER).forPost(trx, 'G0A', 0))).total).toBe(
        0,
      );
      await store.close();
    });

    it('names in one digest those recorded after its feed began, listed in a post or not', async () => {
      const store = await fresh();
      const feed = paidInvoiceQueries(HOME);
      await invoiceSightings(HOME).lookedUp(store, paid, 'G0A', T);
      await store.transaction((trx) => feed.forPost(trx, 'G0A', 0));
      expect((await store.transaction((trx) => feed.forDigest(trx, 'G0A', T))).total).toBe(0);
      expect((await store.transaction((trx) => feed.forDigest(trx, 'G0A', T - 1))).total).toBe(1);
      // Named: the next digest does not name it again.
      expect((await store.transaction((trx) => feed.forDigest(trx, 'G0A', T - 1))).total).toBe(0);
      await store.close();
    });

    it('writes nothing for a lookup that is no news: one read, unless a paid sighting is a day old', async () => {
      const store = await fresh();
      const home = invoiceSightings(HOME);
      const seen = () => store.db.selectFrom('invoices_seen').select(['paid', 'seen_at']).execute();
      let before = store.statements();
      await home.lookedUp(store, open, 'G0A', T);
      expect(store.statements() - before).toBe(1);
      expect(await seen()).toEqual([]);
      await home.lookedUp(store, paid, 'G0A', T + 1);
      for (const at of [T + 2, T + 1 + 24 * HOUR]) {
        before = store.statements();
        await home.lookedUp(store, paid, 'G0A', at);
        expect(store.statements() - before).toBe(1);
      }
      // Seen again past a day, and then seen no longer paid, elsewhere: neither is news of a payment there.
      await home.lookedUp(store, paid, 'G0C', T + 1 + 25 * HOUR);
      expect((await seen()).map((r) => [r.paid, Number(r.seen_at)])).toEqual([[1, T + 1 + 25 * HOUR]]);
      await home.lookedUp(store, open, 'G0D', T + 26 * HOUR);
      expect((await seen()).map((r) => r.paid)).toEqual([0]);
      const listedIn = await store.db.selectFrom('invoices_paid').select('channel_id').execute();
      expect(listedIn.map((r) => r.channel_id)).toEqual(['G0A']);
      await store.close();
    });

    it('records a lookup that sees it paid only when its installation had not seen it paid', async () => {
      const store = await fresh();
      const home = invoiceSightings(HOME);
      await home.lookedUp(store, open, 'G0A', T);
      await home.lookedUp(store, paid, 'G0A', T + 1);
      await home.lookedUp(store, paid, 'G0B', T + 2);
      await invoiceSightings(OTHER).lookedUp(store, paid, 'G0B', T + 3);
      const rows = await store.db
        .selectFrom('invoices_paid')
        .select(['installation_id', 'channel_id', 'how', 'paid_at'])
        .orderBy('id')
        .execute();
      expect(rows.map((r) => ({ ...r, paid_at: Number(r.paid_at) }))).toEqual([
        { installation_id: HOME, channel_id: 'G0A', how: 'seen', paid_at: T + 1 },
        { installation_id: OTHER, channel_id: 'G0B', how: 'seen', paid_at: T + 3 },
      ]);
      await store.close();
    });

    it('forgets its own installation’s sightings from before the cut-off, and nothing of another’s', async () => {
      const store = await fresh();
      for (const id of [HOME, OTHER]) await invoiceSightings(id).lookedUp(store, paid, 'G0A', T);
      await store.transaction((trx) => paidInvoiceQueries(HOME).prune(trx, T + 1));
      const left = async (table: 'invoices_paid' | 'invoices_seen') =>
        (await store.db.selectFrom(table).select('installation_id').execute()).map((r) => r.installation_id);
      expect(await left('invoices_paid')).toEqual([OTHER]);
      expect(await left('invoices_seen')).toEqual([OTHER]);
      // Forgotten, a paid invoice looked up again is seen paid again.
      await invoiceSightings(HOME).lookedUp(store, paid, 'G0A', T + 2);
      expect((await store.transaction((trx) => paidInvoiceQueries(HOME).forPost(trx, 'G0A', 0))).total).toBe(
        1,
      );
      await store.close();
    });

    it('commits a lookup’s sighting without waiting for the disk, and only that transaction', async () => {
      const store = await fresh();
      // Whether the transaction's commit waits for the disk, as its database says.
      const syncs = (trx: Kysely<Tables>) =>
        store.dialect === 'postgres'
          ? sql<{ synchronous_commit: string }>`show synchronous_commit`
              .execute(trx)
              .then((r) => r.rows[0]?.synchronous_commit !== 'off')
          : sql<{ synchronous: number }>`pragma synchronous`
              .execute(trx)
              .then((r) => r.rows[0]?.synchronous === 2);
      const seen: boolean[] = [];
      const watching = {
        db: store.db,
        transaction: <T>(work: (trx: Kysely<Tables>) => Promise<T>, commit?: Commit) =>
          store.transaction(async (trx) => {
            seen.push(await syncs(trx));
            return work(trx);
          }, commit),
      };
      await invoiceSightings(HOME).lookedUp(watching, paid, 'G0A', T);
      expect(seen).toEqual([false]);
      expect((await store.transaction((trx) => paidInvoiceQueries(HOME).forPost(trx, 'G0A', 0))).total).toBe(
        1,
      );
      // Every other transaction of the connection waits for the disk again.
      expect(await store.transaction(syncs)).toBe(true);
      await store.close();
    });
  });
}
