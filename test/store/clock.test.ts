import { afterEach, describe, expect, it, vi } from 'vitest';
import { databaseClock, SYNC_EVERY_MS } from '../../src/store/clock.js';

/** A monotonic clock the test moves, and a server whose time and answer delay the test sets. */
function world() {
  const w = { elapsed: 1_000, server: Date.parse('2026-11-29T09:00:00Z'), delay: 0, failing: false };
  const read = async () => {
    if (w.failing) throw new Error('connection refused');
    const at = w.server;
    w.elapsed += w.delay;
    w.server += w.delay;
    return at;
  };
  return { w, parts: { read, monotonic: () => w.elapsed, everyMs: SYNC_EVERY_MS } };
}

afterEach(() => vi.useRealTimers());

describe('the database clock', () => {
  it('tells the server’s time, advanced by elapsed time, whatever this machine’s wall clock says', async () => {
    const { w, parts } = world();
    vi.spyOn(Date, 'now').mockReturnValue(Date.parse('2026-11-29T09:03:00Z'));
    const clock = await databaseClock(parts);
    expect(clock.now()).toBe(Date.parse('2026-11-29T09:00:00Z'));
    w.elapsed += 1_500;
    expect(clock.now()).toBe(Date.parse('2026-11-29T09:00:01.500Z'));
    clock.stop();
    vi.restoreAllMocks();
  });

  it('places the server’s reading in the middle of the round trip', async () => {
    const { w, parts } = world();
    w.delay = 40;
    const clock = await databaseClock(parts);
    // Read at the start of a 40 ms round trip, received at its end: the reading was 20 ms old.
    expect(clock.now()).toBe(Date.parse('2026-11-29T09:00:00.020Z'));
    clock.stop();
  });

  it('reads the server again every 30 s, and follows it when the server’s clock was corrected', async () => {
    vi.useFakeTimers();
    const { w, parts } = world();
    const clock = await databaseClock(parts);
    w.server += 7_000; // the server's clock stepped forward 7 s, no time elapsed here
    expect(clock.now()).toBe(Date.parse('2026-11-29T09:00:00Z'));
    await vi.advanceTimersByTimeAsync(SYNC_EVERY_MS - 1);
    expect(clock.now()).toBe(Date.parse('2026-11-29T09:00:00Z'));
    await vi.advanceTimersByTimeAsync(1);
    expect(clock.now()).toBe(Date.parse('2026-11-29T09:00:07Z'));
    clock.stop();
    w.server += 7_000;
    await vi.advanceTimersByTimeAsync(SYNC_EVERY_MS);
    expect(clock.now()).toBe(Date.parse('2026-11-29T09:00:07Z'));
  });

  it('keeps going on its last reading while the server cannot be read, and fails to start without one', async () => {
    vi.useFakeTimers();
    const { w, parts } = world();
    const clock = await databaseClock(parts);
    w.failing = true;
    w.elapsed += 5_000;
    await vi.advanceTimersByTimeAsync(SYNC_EVERY_MS);
    await expect(clock.sync()).rejects.toThrow('connection refused');
    expect(clock.now()).toBe(Date.parse('2026-11-29T09:00:05Z'));
    clock.stop();
    await expect(databaseClock(parts)).rejects.toThrow('connection refused');
  });
});
