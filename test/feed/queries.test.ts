import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { balanceChanges } from '../../src/feed/deltas.js';
import { feedClaims, feedQueries, type NewSubscription } from '../../src/feed/queries.js';
import { LeaseLost } from '../../src/runner/leases.js';
import { openStore, type Store } from '../../src/store/database.js';
import { installationId, ONE_WORKSPACE } from '../../src/store/keys.js';
import { emptyWork } from '../support/empty-store.js';

/** The one workspace's feed queries and the claims across installations, side by side. */
const feedOf = (store: Store) => ({ ...feedQueries(store, ONE_WORKSPACE), ...feedClaims(store) });

const dir = mkdtempSync(join(tmpdir(), 'bot-feed-queries-'));
let store: Store;
beforeAll(async () => {
  store = await openStore({ kind: 'sqlite', path: join(dir, 'bot.sqlite') });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  await emptyWork(store);
});

/** The changes after the time `since`, however many were numbered. */
const changesAfter = (since: number) => ({ since, upTo: Number.MAX_SAFE_INTEGER });
const subscription = (overrides: Partial<NewSubscription> = {}): NewSubscription => ({
  id: `s-${Math.random()}`,
  team_id: 'T1',
  channel_id: 'G1',
  subscriber_id: 'U1',
  digest_hour: 9,
  digest_minute: 0,
  digest_zone: 'UTC',
  state: 'active',
  created_at: 0,
  ended_at: null,
  end_reason: null,
  next_digest_at: 1000,
  lease_owner: null,
  lease_until: null,
  key_notice_at: null,
  ...overrides,
});

const balance = (btc: string) => ({ BTC: { title: 'Bitcoin', balance: btc } });

describe('the feed’s queries', () => {
  it('take the reading at or before a time, the later one of two taken at once', async () => {
    const q = feedOf(store);
    await store.transaction(async (trx) => {
      await q.insertReading(trx, 100, balance('1'));
      await q.insertReading(trx, 200, balance('2'));
      await q.insertReading(trx, 200, balance('3'));
    });
    expect(JSON.parse((await q.latestReading(store.db))?.balances ?? '')).toEqual(balance('3'));
    expect((await q.latestReading(store.db, 150))?.taken_at).toBe(100);
    expect(await q.latestReading(store.db, 50)).toBeUndefined();
    expect(JSON.parse((await q.oldestReading(store.db))?.balances ?? '')).toEqual(balance('1'));
  });

  it('count the rises and falls after a time, and prune what is older but the newest reading', async () => {
    const q = feedOf(store);
    const rise = balanceChanges(balance('1'), balance('2'));
    const fall = balanceChanges(balance('2'), balance('1'));
    await store.transaction(async (trx) => {
      await q.insertReading(trx, 5, balance('0'));
      await q.insertReading(trx, 10, balance('1'));
      await q.insertChanges(trx, 10, rise);
      await q.insertChanges(trx, 20, rise);
      await q.insertChanges(trx, 30, fall);
    });
    expect(await q.changeCounts(store.db, changesAfter(10))).toEqual({ rises: 1, falls: 1 });
    // Each currency once, however often it moved, and only what moved after the time asked.
    expect(await q.movedCurrencies(store.db, changesAfter(10))).toEqual(new Set(rise.map((c) => c.currency)));
    expect(await q.movedCurrencies(store.db, changesAfter(30))).toEqual(new Set());
    await store.transaction((trx) => q.pruneHistory(trx, 20));
    expect(await q.changeCounts(store.db, changesAfter(0))).toEqual({ rises: 1, falls: 1 });
    // However old, the newest reading is what the next one is compared with.
    expect((await q.oldestReading(store.db))?.taken_at).toBe(10);
    expect(JSON.parse((await q.latestReading(store.db))?.balances ?? '')).toEqual(balance('1'));
  });

  it('count the changes numbered after the last digest’s and up to the last one when the digest read the balance, whatever their times', async () => {
    const q = feedOf(store);
    const rise = balanceChanges(balance('1'), balance('2'));
    const fall = balanceChanges(balance('2'), balance('1'));
    expect(await store.transaction((trx) => q.digestPoint(trx))).toBeUndefined();
    await store.transaction(async (trx) => {
      await q.insertReading(trx, 50, balance('1'));
      await q.insertChanges(trx, 50, rise);
    });
    const first = await store.transaction((trx) => q.digestPoint(trx));
    // A clock stepped back: these two are stamped earlier, yet numbered after.
    await store.transaction(async (trx) => {
      await q.insertReading(trx, 10, balance('2'));
      await q.insertChanges(trx, 10, fall);
      await q.insertChanges(trx, 5, rise);
    });
    const second = await store.transaction((trx) => q.digestPoint(trx));
    expect(JSON.parse(second?.balances ?? '')).toEqual(balance('2'));
    const window = { afterId: first?.changes_up_to ?? 0, upTo: second?.changes_up_to ?? 0 };
    expect(await q.changeCounts(store.db, window)).toEqual({ rises: 1, falls: 1 });
    expect(await q.changeCounts(store.db, { afterId: 0, upTo: first?.changes_up_to ?? 0 })).toEqual({
      rises: 1,
      falls: 0,
    });
    expect(await q.changeCounts(store.db, { ...window, upTo: first?.changes_up_to ?? 0 })).toEqual({
      rises: 0,
      falls: 0,
    });
    expect((await q.readingById(store.db, first?.id ?? 0))?.taken_at).toBe(50);
  });

  it('let only the instance holding the poll release it', async () => {
    const q = feedOf(store);
    await store.transaction((trx) => q.startPoll(trx, 100, 40));
    // No feed runs yet: the poll rests.
    expect(await q.nextPollDueAt(0)).toBeUndefined();
    expect(await q.claimPolls('a', 100, 5, 1000)).toEqual([]);
    await store.transaction((trx) => q.insert(trx, subscription()));
    await store.transaction((trx) => q.startPoll(trx, 999, 999)); // a second feed starts nothing
    expect(await q.nextPollDueAt(0)).toBe(100);
    expect(await q.claimPolls('a', 99, 5, 1000)).toEqual([]);
    expect(await q.claimPolls('a', 100, 5, 1000)).toHaveLength(1);
    expect(await q.nextPollDueAt(101)).toBeUndefined();
    expect(await q.claimPolls('b', 101, 5, 1000)).toEqual([]);
    await expect(
      store.transaction((trx) => q.releasePoll(trx, 'b', { next_run_at: 200 })),
    ).rejects.toBeInstanceOf(LeaseLost);
    await store.transaction((trx) => q.releasePoll(trx, 'a', { next_run_at: 200, last_success_at: 100 }));
    expect(await q.nextPollDueAt(101)).toBe(200);
    expect(await q.pollSucceededAt(store.db)).toBe(100);
  });

  it('claim due digests earliest first, and let only their holder move them on', async () => {
    const q = feedOf(store);
    const late = subscription({ channel_id: 'G2', next_digest_at: 500 });
    const early = subscription({ channel_id: 'G3', next_digest_at: 300 });
    await store.transaction(async (trx) => {
      for (const s of [subscription({ next_digest_at: 5000 }), late, early]) await q.insert(trx, s);
    });
    expect(await q.nextDigestDueAt(0)).toBe(300);
    expect((await q.claimDigests('a', 1000, 10, 30_000)).map((s) => s.id)).toEqual([early.id, late.id]);
    expect(await q.claimDigests('b', 1000, 10, 30_000)).toEqual([]);
    expect(await q.nextDigestDueAt(1000)).toBe(5000);
    await expect(
      store.transaction((trx) => q.rescheduleDigest(trx, 'b', early.id, 9000)),
    ).rejects.toBeInstanceOf(LeaseLost);
    await store.transaction((trx) => q.rescheduleDigest(trx, 'a', early.id, 9000));
    expect((await q.byId(early.id))?.next_digest_at).toBe(9000);
  });

  it('tag each feed message with its subscription, and end a subscription once', async () => {
    const q = feedOf(store);
    const sub = subscription();
    await store.transaction(async (trx) => {
      await q.insert(trx, sub);
      await q.enqueueTo(trx, [sub], { text: 'x', blocks: [] }, 1);
    });
    expect(await store.db.selectFrom('outbox').select(['channel', 'subscription_id']).execute()).toEqual([
      { channel: 'G1', subscription_id: sub.id },
    ]);
    expect(await store.transaction((trx) => q.end(trx, sub.id, 'unsubscribed', 2))).toBe(true);
    expect(await store.transaction((trx) => q.end(trx, sub.id, 'unsubscribed', 3))).toBe(false);
    expect(await q.activeInChannel(store.db, 'G1')).toBeUndefined();
    expect(await q.active(store.db)).toEqual([]);
  });

  it('keep each installation’s feeds, readings, changes and poll to itself', async () => {
    const one = feedQueries(store, installationId('T1'));
    const two = feedQueries(store, installationId('T2'));
    const oneSub = subscription({ channel_id: 'G1' });
    const twoSub = subscription({ channel_id: 'G1' }); // the same channel id, another installation
    await store.transaction(async (trx) => {
      await one.insert(trx, oneSub);
      await two.insert(trx, twoSub);
      await one.insertReading(trx, 5, balance('1'));
      await one.insertReading(trx, 10, balance('1'));
      await two.insertReading(trx, 15, balance('2'));
      await two.insertReading(trx, 20, balance('2'));
      await one.insertChanges(trx, 10, balanceChanges(balance('0'), balance('1')));
      await one.startPoll(trx, 100, 10);
      await two.startPoll(trx, 50, 20);
    });
    expect((await one.activeInChannel(store.db, 'G1'))?.id).toBe(oneSub.id);
    expect((await two.activeInChannel(store.db, 'G1'))?.id).toBe(twoSub.id);
    expect(await one.byId(twoSub.id)).toBeUndefined();
    expect((await one.active(store.db)).map((s) => s.id)).toEqual([oneSub.id]);
    expect(JSON.parse((await two.latestReading(store.db))?.balances ?? '')).toEqual(balance('2'));
    expect(JSON.parse((await one.oldestReading(store.db))?.balances ?? '')).toEqual(balance('1'));
    expect(await one.changeCounts(store.db, changesAfter(0))).toEqual({ rises: 1, falls: 0 });
    expect(await two.changeCounts(store.db, changesAfter(0))).toEqual({ rises: 0, falls: 0 });
    expect(await two.movedCurrencies(store.db, changesAfter(0))).toEqual(new Set());
    expect(await two.pollSucceededAt(store.db)).toBe(20);
    expect(await feedOf(store).latestReading(store.db)).toBeUndefined();
    // The one workspace's rows are the installation '' (what migration 007 gave the rows before it).
    await store.transaction((trx) => feedOf(store).insertReading(trx, 30, balance('3')));
    expect(
      await store.db
        .selectFrom('balance_history')
        .select('installation_id')
        .where('taken_at', '=', 30)
        .execute(),
    ).toEqual([{ installation_id: '' }]);

    // Claims are across installations, the longest overdue first; each releases only its own.
    expect((await feedClaims(store).claimPolls('a', 100, 5, 1000)).map((p) => p.installation_id)).toEqual([
      'T2',
      'T1',
    ]);
    await store.transaction((trx) => one.releasePoll(trx, 'a', { next_run_at: 500 }));
    await expect(store.transaction((trx) => one.releasePoll(trx, 'a', {}))).rejects.toBeInstanceOf(LeaseLost);
    await store.transaction((trx) => two.releasePoll(trx, 'a', { next_run_at: 400 }));
    expect(await feedClaims(store).nextPollDueAt(101)).toBe(400);

    // Ending, noticing and pruning one installation's rows leaves the other's.
    await store.transaction(async (trx) => {
      expect(await one.end(trx, twoSub.id, 'unsubscribed', 30)).toBe(false);
      await one.markKeyNoticed(trx, [oneSub, twoSub], 30);
      await one.pruneHistory(trx, 1000);
    });
    expect((await two.byId(twoSub.id))?.state).toBe('active');
    expect((await two.byId(twoSub.id))?.key_notice_at).toBeNull();
    expect((await one.byId(oneSub.id))?.key_notice_at).toBe(30);
    // One's newest reading stays, and the other's older one too.
    expect((await one.oldestReading(store.db))?.taken_at).toBe(10);
    expect((await one.latestReading(store.db))?.taken_at).toBe(10);
    expect((await two.oldestReading(store.db))?.taken_at).toBe(15);
    await store.transaction(async (trx) => {
      await one.enqueueTo(trx, [oneSub], { text: 'x', blocks: [] }, 40);
      await two.tell(trx, [{ channel: 'G1', message: { text: 'y', blocks: [] } }], 40);
    });
    expect(
      await store.db.selectFrom('outbox').select(['installation_id', 'lane']).orderBy('id').execute(),
    ).toEqual([
      { installation_id: 'T1', lane: 'T1/G1/feed' },
      { installation_id: 'T2', lane: 'T2/G1' },
    ]);
    await store.transaction((trx) => two.clearKeyNotices(trx));
    expect((await one.byId(oneSub.id))?.key_notice_at).toBe(30);
  });
});
