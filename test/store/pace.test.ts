import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/database.js';
import { installationId } from '../../src/store/keys.js';
import {
  PACE_HORIZON_MS,
  PACE_MARGIN_MS,
  PACE_SLACK_MS,
  PACE_STEPPED_BACK_MS,
  paceInterval,
  reserveSlot,
  sharedPaces,
} from '../../src/store/pace.js';
import { installed } from '../support/installations-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'bot-pace-'));
let store: Store;
beforeAll(async () => {
  store = await openStore({ kind: 'sqlite', path: join(dir, 'bot.sqlite') });
  // A key's pace is kept only while its installation is stored.
  await installed(store, 'T1', 'T2', 'T3', 'T4', 'T5');
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a key’s background budget kept in the store', () => {
  it('puts its calls far enough apart that rps + 1 of them never arrive in a second, each up to the slack late and the margin slower', () => {
    expect(PACE_SLACK_MS).toBe(100);
    expect(PACE_MARGIN_MS).toBe(150);
    expect(paceInterval(5)).toBe(250);
    expect(paceInterval(3)).toBe(417);
    expect(paceInterval(100)).toBe(13);
    for (const rps of [1, 3, 5, 7, 10, 100]) {
      // The first call as late as allowed and as slow on its way, the (rps + 1)th on time: still a second apart.
      expect(rps * paceInterval(rps) - PACE_SLACK_MS - PACE_MARGIN_MS).toBeGreaterThanOrEqual(1000);
      // And not slower than it needs to be.
      expect(rps * (paceInterval(rps) - 1) - PACE_SLACK_MS - PACE_MARGIN_MS).toBeLessThan(1000);
    }
  });

  it('claims no further ahead than a second', () => {
    expect(PACE_HORIZON_MS).toBe(1000);
  });

  it('reserves slots one after the other, and starts again from now once idle', async () => {
    expect(await reserveSlot(store, installationId('T1'), 10_000, 200)).toBe(10_000);
    expect(await reserveSlot(store, installationId('T1'), 10_050, 200)).toBe(10_200);
    expect(await reserveSlot(store, installationId('T1'), 10_100, 200)).toBe(10_400);
    expect(await reserveSlot(store, installationId('T2'), 10_100, 200)).toBe(10_100);
    expect(await reserveSlot(store, installationId('T1'), 10_700, 200)).toBe(10_700);
    const row = await store.db
      .selectFrom('background_pace')
      .selectAll()
      .where('installation_id', '=', installationId('T1'))
      .executeTakeFirstOrThrow();
    expect(row.next_slot_at).toBe(10_900);
  });

  it('takes the clock stepped back ten minutes as now: the key waits no ten minutes for its next slot', async () => {
    const at = 5_000_000;
    expect(await reserveSlot(store, installationId('T3'), at, 220)).toBe(at);
    expect(await reserveSlot(store, installationId('T3'), at, 220)).toBe(at + 220);
    // An NTP correction: the clock is ten minutes behind what it was.
    const back = at - 10 * 60_000;
    expect(await reserveSlot(store, installationId('T3'), back, 220)).toBe(back);
    expect(await reserveSlot(store, installationId('T3'), back, 220)).toBe(back + 220);
    // A key whose calls legitimately reserved a little ahead keeps its turns.
    expect(await reserveSlot(store, installationId('T3'), back + 10, 220)).toBe(back + 440);
    expect(PACE_STEPPED_BACK_MS).toBe(60_000);
  });

  it('waits for its slot, again if a timer fires before the clock reaches it', async () => {
    let now = 50_000;
    const waits: number[] = [];
    const pace = sharedPaces(
      store,
      4,
      () => now,
      async (ms) => {
        waits.push(ms);
        // The first wait comes back 10 ms early.
        now += waits.length === 1 ? ms - 10 : ms;
      },
    )(installationId('T3'));
    await pace();
    expect(waits).toEqual([]);
    await pace();
    expect(waits).toEqual([313, 10]);
    expect(now).toBe(50_313);
    now += 1000;
    await pace();
    expect(waits).toEqual([313, 10]);
  });

  it('gives a slot up when it starts later than the slack, and makes no call late on its third turn too', async () => {
    let now = 80_000;
    const starts: number[] = [];
    const lateBy = [101, 100];
    const pace = sharedPaces(
      store,
      5,
      () => now,
      async (ms) => {
        now += ms + (lateBy.shift() ?? 0);
      },
    )(installationId('T5'));
    const call = async () => {
      if (await pace()) starts.push(now);
    };
    await call();
    // Its slot at 80 250 comes 101 ms late: the next one (80 500) comes 100 ms late, within the slack.
    await call();
    expect(starts).toEqual([80_000, 80_600]);
    // Slots 80 750, 81 000 and 81 250 each come 110 ms late: no call is made.
    lateBy.push(110, 110, 110);
    await call();
    expect(starts).toEqual([80_000, 80_600]);
    // The next call takes the next slot, 81 500, on time.
    await call();
    expect(starts).toEqual([80_000, 80_600, 81_500]);
  });

  it('stops taking turns once the call’s deadline ends, and resolves without one', async () => {
    let now = 85_000;
    const deadline = new AbortController();
    const waits: number[] = [];
    const pace = sharedPaces(
      store,
      5,
      () => now,
      async (ms, signal) => {
        expect(signal).toBe(deadline.signal);
        waits.push(ms);
        // The first slot comes 150 ms late; the second on time, but the deadline ends meanwhile.
        now += ms + (waits.length === 1 ? 150 : 0);
        if (waits.length === 2) deadline.abort();
      },
    )(installationId('T5'));
    // Its key's next slot is ahead: each turn waits.
    await reserveSlot(store, installationId('T5'), now, paceInterval(5));
    await expect(pace(deadline.signal)).resolves.toBe(false);
    expect(waits).toHaveLength(2);
    // A call whose deadline has already ended takes no slot and waits for none.
    const before = store.statements();
    await expect(pace(deadline.signal)).resolves.toBe(false);
    expect(waits).toHaveLength(2);
    expect(store.statements() - before).toBe(0);
  });

  it('resolves when the deadline ends a wait by rejecting it, and fails as the wait does otherwise', async () => {
    const now = 87_000;
    const deadline = new AbortController();
    const pace = sharedPaces(
      store,
      5,
      () => now,
      async (_ms, signal) => {
        if (signal === deadline.signal) {
          deadline.abort();
          throw new Error('aborted');
        }
        throw new Error('the wait failed');
      },
    )(installationId('T4'));
    // Its key's next slot is ahead: the call waits, and the deadline ends the wait.
    await reserveSlot(store, installationId('T4'), now, paceInterval(5));
    await expect(pace(deadline.signal)).resolves.toBe(false);
    await reserveSlot(store, installationId('T4'), now, paceInterval(5));
    await expect(pace()).rejects.toThrow('the wait failed');
  });

  it('waits by the clock, cut short by the deadline', async () => {
    const pace = sharedPaces(store, 1, Date.now)(installationId('T3'));
    const deadline = new AbortController();
    // Its key's next slot is a second and more away.
    await reserveSlot(store, installationId('T3'), Date.now(), 1_500);
    const started = Date.now();
    setTimeout(() => deadline.abort(), 20);
    await expect(pace(deadline.signal)).resolves.toBe(false);
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('gives calls of one key that ask together consecutive slots, reserved in one statement', async () => {
    const now = 90_000;
    const waits: number[] = [];
    const pace = sharedPaces(
      store,
      4,
      () => now,
      async (ms) => {
        waits.push(ms);
        throw new Error('stop waiting');
      },
    )(installationId('T6'));
    const before = store.statements();
    const calls = await Promise.allSettled([pace(), pace(), pace()]);
    expect(store.statements() - before).toBe(1);
    expect(calls.map((c) => c.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    expect(waits.sort((a, b) => a - b)).toEqual([313, 626]);
  });

  it('waits on the real clock by default', async () => {
    const pace = sharedPaces(store, 20)(installationId('T4'));
    const started = Date.now();
    for (let i = 0; i < 3; i += 1) await pace();
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(100);
    expect(elapsed).toBeLessThan(1000);
  });
});
