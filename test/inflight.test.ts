import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Inflight } from '../src/inflight.js';

describe('Inflight', () => {
  it('waits for work still running, including work that starts while draining', async () => {
    const inflight = new Inflight();
    const done: string[] = [];
    void inflight.run(async () => {
      await sleep(30);
      done.push('first');
      void inflight.run(async () => {
        await sleep(30);
        done.push('second');
      });
    });
    expect(await inflight.drain(1000)).toBe(true);
    expect(done).toEqual(['first', 'second']);
    expect(inflight.size).toBe(0);
  });

  it('gives up after the grace period', async () => {
    const inflight = new Inflight();
    void inflight.run(() => sleep(5000));
    const started = performance.now();
    expect(await inflight.drain(50)).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('leaves no timer behind once everything has settled', async () => {
    const inflight = new Inflight();
    void inflight.run(() => sleep(10));
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    expect(await inflight.drain(60_000)).toBe(true);
    expect(timers()).toBeLessThan(before);
  });

  it('forgets failed work too', async () => {
    const inflight = new Inflight();
    await expect(inflight.run(async () => Promise.reject(new Error('x')))).rejects.toThrow('x');
    expect(inflight.size).toBe(0);
  });
});
