import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/database.js';
import { PACE_HORIZON_MS, paceInterval, reserveSlot, sharedPace } from '../../src/store/pace.js';

const dir = mkdtempSync(join(tmpdir(), 'bot-pace-'));
let store: Store;
beforeAll(async () => {
  store = await openStore({ kind: 'sqlite', path: join(dir, 'bot.sqlite') });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a key’s background budget kept in the store', () => {
  it('puts its calls 1000/rps ms apart, rounded up so a second never holds more than rps', () => {
    expect(paceInterval(5)).toBe(200);
    expect(paceInterval(3)).toBe(334);
    expect(paceInterval(100)).toBe(10);
    expect(3 * paceInterval(3)).toBeGreaterThanOrEqual(1000);
  });

  it('claims no further ahead than a second', () => {
    expect(PACE_HORIZON_MS).toBe(1000);
  });

  it('reserves slots one after the other, and starts again from now once idle', async () => {
    expect(await reserveSlot(store, 'T1', 10_000, 200)).toBe(10_000);
    expect(await reserveSlot(store, 'T1', 10_050, 200)).toBe(10_200);
    expect(await reserveSlot(store, 'T1', 10_100, 200)).toBe(10_400);
    expect(await reserveSlot(store, 'T2', 10_100, 200)).toBe(10_100);
    expect(await reserveSlot(store, 'T1', 10_700, 200)).toBe(10_700);
    const row = await store.db
      .selectFrom('background_pace')
      .selectAll()
      .where('installation_id', '=', 'T1')
      .executeTakeFirstOrThrow();
    expect(row.next_slot_at).toBe(10_900);
  });

  it('waits for its slot, again if a timer fires before the clock reaches it', async () => {
    let now = 50_000;
    const waits: number[] = [];
    const pace = sharedPace(
      store,
      'T3',
      4,
      () => now,
      async (ms) => {
        waits.push(ms);
        // The first wait comes back 10 ms early.
        now += waits.length === 1 ? ms - 10 : ms;
      },
    );
    await pace();
    expect(waits).toEqual([]);
    await pace();
    expect(waits).toEqual([250, 10]);
    expect(now).toBe(50_250);
    now += 1000;
    await pace();
    expect(waits).toEqual([250, 10]);
  });

  it('waits on the real clock by default', async () => {
    const pace = sharedPace(store, 'T4', 20);
    const started = Date.now();
    for (let i = 0; i < 3; i += 1) await pace();
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(100);
    expect(elapsed).toBeLessThan(1000);
  });
});
