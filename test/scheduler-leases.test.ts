import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { type HeldLease, leased, type Task } from '../src/scheduler.js';
import { captureLogs } from './support/bolt.js';

/** The runner's leases: a token per claim, renewed while its items run. */

const LEASE = { owner: 'instance-1', ms: 60 };

/** A task whose items run until the test ends them, renewing what `kept` says still holds. */
function slowTask(kept: (tokens: readonly string[]) => Set<string> | Error) {
  const renewals: string[][] = [];
  const ends = new Map<string, () => void>();
  const leases = new Map<string, HeldLease>();
  let next = 0;
  const task: Task<string, true> = {
    name: 'slow',
    concurrency: 4,
    idleMs: 1000,
    claim: async (_now, limit) => {
      const from = next;
      next += limit;
      return Array.from({ length: limit }, (_, n) => `item-${from + n + 1}`);
    },
    async renew(tokens) {
      renewals.push([...tokens]);
      const answer = kept(tokens);
      if (answer instanceof Error) throw answer;
      return answer;
    },
    dueAt: () => 0,
    installationOf: () => '',
    serve: async () => true,
    postpone: async () => {},
    run: (item, _part, lease) => {
      leases.set(item, lease);
      return new Promise((resolve) => ends.set(item, () => resolve({ outcome: 'sent' })));
    },
  };
  return { task, renewals, ends, leases };
}

describe('the runner’s leases', () => {
  it('renews every running claim’s token each third of the lease, in one call, until its items end', async () => {
    const { task, renewals, ends } = slowTask((tokens) => new Set(tokens));
    const job = leased(task, LEASE, Date.now);
    const first = await job.claim(0, 2);
    const second = await job.claim(0, 1);
    const running = [...first, ...second].map((item) => job.run(item));
    await sleep(LEASE.ms);
    expect(renewals.length).toBeGreaterThanOrEqual(2);
    const [tokens] = renewals;
    expect(tokens).toHaveLength(2);
    expect(tokens?.every((t) => t.startsWith('instance-1/'))).toBe(true);
    for (const end of ends.values()) end();
    await Promise.all(running);
    const after = renewals.length;
    await sleep(LEASE.ms);
    expect(renewals).toHaveLength(after);
  });

  it('marks a lease lost once a renewal finds its token holds nothing, and only that one', async () => {
    const { task, ends, leases } = slowTask((tokens) => new Set(tokens.slice(1)));
    const job = leased(task, LEASE, Date.now);
    const running = [...(await job.claim(0, 1)), ...(await job.claim(0, 1))].map((item) => job.run(item));
    await sleep(LEASE.ms);
    expect([leases.get('item-1')?.lost, leases.get('item-2')?.lost]).toEqual([true, false]);
    for (const end of ends.values()) end();
    await Promise.all(running);
  });

  it('says when a renewal fails, and marks nothing lost: the rows’ fence still holds', async () => {
    const logs = captureLogs();
    const { task, ends, leases } = slowTask(() => new Error('database down'));
    const job = leased(task, LEASE, Date.now, logs.logger);
    const running = (await job.claim(0, 1)).map((item) => job.run(item));
    await sleep(LEASE.ms);
    expect(leases.get('item-1')?.lost).toBe(false);
    expect(logs.lines.find((l) => l.msg === 'could not renew the leases of running work')).toMatchObject({
      level: 'warn',
      job: 'slow',
    });
    for (const end of ends.values()) end();
    await Promise.all(running);
  });
});
