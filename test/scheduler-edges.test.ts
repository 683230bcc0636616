import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Inflight } from '../src/inflight.js';
import { createScheduler, type Job } from '../src/scheduler.js';
import { captureLogs } from './support/bolt.js';

const deps = () => ({ logger: captureLogs().logger, inflight: new Inflight(), clock: Date.now });

/** A job that sleeps a minute when idle, handing out what `batches` holds, one batch per claim. */
function job(name: string, batches: number[][], extra: Partial<Job<number>> = {}) {
  const seen = { claims: 0 };
  const never = new Promise<never>(() => undefined);
  const j: Job<number> = {
    name,
    concurrency: 4,
    idleMs: 60_000,
    dueAt: () => 0,
    async claim() {
      seen.claims += 1;
      return batches.shift() ?? [];
    },
    // Items run until the test ends: no finishing item wakes the loop.
    run: () => never,
    ...extra,
  };
  return { job: j, seen };
}

describe('the scheduler, between claims', () => {
  it('sleeps after claiming fewer items than it had room for', async () => {
    const a = job('a', [[1], [2]]);
    const scheduler = createScheduler(deps(), [a.job]);
    scheduler.start();
    await expect.poll(() => a.seen.claims).toBe(1);
    await sleep(100);
    expect(a.seen.claims).toBe(1);
    await scheduler.stop();
  });

  it('claims again at once after a partial claim when the job says more is due now', async () => {
    const a = job('a', [[1], [2]], { nextDueAt: async (now) => now });
    const scheduler = createScheduler(deps(), [a.job]);
    scheduler.start();
    await expect.poll(() => a.seen.claims, { timeout: 5000 }).toBeGreaterThanOrEqual(2);
    await scheduler.stop();
  });

  it('wakes every job when told to wake without a name', async () => {
    const a = job('a', []);
    const b = job('b', []);
    const scheduler = createScheduler(deps(), [a.job, b.job]);
    scheduler.start();
    await expect.poll(() => [a.seen.claims, b.seen.claims]).toEqual([1, 1]);
    scheduler.wake();
    await expect.poll(() => [a.seen.claims, b.seen.claims], { timeout: 5000 }).toEqual([2, 2]);
    scheduler.wake('b');
    await expect.poll(() => b.seen.claims, { timeout: 5000 }).toBe(3);
    expect(a.seen.claims).toBe(2);
    await scheduler.stop();
  });
});

describe('the scheduler, for a job with a claim gap', () => {
  it('claims again a gap after a partial claim, not at each item’s end, and asks for no next due time then', async () => {
    const ends: (() => void)[] = [];
    const asked = { nextDue: 0 };
    const a = job('a', [[1], [2], [3], [4]], {
      claimGapMs: 200,
      nextDueAt: async (now) => {
        asked.nextDue += 1;
        return now;
      },
      run: () =>
        new Promise((resolve) => {
          ends.push(() => resolve({ outcome: 'sent' }));
        }),
    });
    const scheduler = createScheduler(deps(), [a.job]);
    scheduler.start();
    await expect.poll(() => a.seen.claims).toBe(1);
    // The item's end wakes no claim: the next comes with the gap.
    ends.shift()?.();
    await sleep(100);
    expect(a.seen.claims).toBe(1);
    await expect.poll(() => a.seen.claims, { timeout: 1000 }).toBe(2);
    expect(asked.nextDue).toBe(0);
    await scheduler.stop();
    for (const end of ends) end();
  });

  it('claims when a slot frees up while every slot was taken', async () => {
    const ends: (() => void)[] = [];
    const a = job('a', [[1, 2, 3, 4], [5]], {
      claimGapMs: 60_000,
      run: () =>
        new Promise((resolve) => {
          ends.push(() => resolve({ outcome: 'sent' }));
        }),
    });
    const scheduler = createScheduler(deps(), [a.job]);
    scheduler.start();
    await expect.poll(() => a.seen.claims).toBe(1);
    ends.shift()?.();
    await expect.poll(() => a.seen.claims, { timeout: 1000 }).toBe(2);
    await scheduler.stop();
    for (const end of ends) end();
  });
});
