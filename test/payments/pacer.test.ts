import { describe, expect, it } from 'vitest';
import { Pacer } from '../../src/payments/pacer.js';

describe('the background pacer', () => {
  it('spaces calls 1000/perSecond ms apart, the first at once', async () => {
    let now = 1000;
    const waits: number[] = [];
    const pacer = new Pacer(
      4,
      () => now,
      async (ms) => {
        waits.push(ms);
      },
    );
    await pacer.take();
    await pacer.take();
    now += 100;
    await pacer.take();
    now += 1000;
    await pacer.take();
    expect(waits).toEqual([250, 400]);
  });

  it('says whether the call may go: not when its deadline ended first, and takes no slot once it has', async () => {
    const now = 1000;
    const deadline = new AbortController();
    const waits: number[] = [];
    const pacer = new Pacer(
      4,
      () => now,
      async (ms) => {
        waits.push(ms);
        deadline.abort();
      },
    );
    await expect(pacer.take(deadline.signal)).resolves.toBe(true);
    // Its slot is 250 ms away; the deadline ends while it waits.
    await expect(pacer.take(deadline.signal)).resolves.toBe(false);
    // Ended already: no slot taken, so the next call's is still 500.
    await expect(pacer.take(deadline.signal)).resolves.toBe(false);
    await expect(pacer.take()).resolves.toBe(true);
    expect(waits).toEqual([250, 500]);
  });

  it('waits on the real clock by default', async () => {
    const pacer = new Pacer(20);
    const started = performance.now();
    for (let i = 0; i < 3; i += 1) await pacer.take();
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(95);
    expect(elapsed).toBeLessThan(1000);
  });
});
