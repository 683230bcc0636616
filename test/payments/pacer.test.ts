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

  it('waits on the real clock by default', async () => {
    const pacer = new Pacer(20);
    const started = performance.now();
    for (let i = 0; i < 3; i += 1) await pacer.take();
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(95);
    expect(elapsed).toBeLessThan(1000);
  });
});
