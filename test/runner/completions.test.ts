import { describe, expect, it, vi } from 'vitest';
import { type Completion, leased, type Task } from '../../src/scheduler.js';
import { installationId } from '../../src/store/keys.js';
import { servingAll } from '../support/jobs.js';

/**
 * The runner records what work left to it (`completion`): many items' in one statement while
 * they run together, an item's alone at once when nothing else could join it, fenced by each
 * item's own lease, and a store's failure is the work's failure.
 */

const LEASE = { owner: 'instance-1', ms: 30_000 };

function task(recorded: (done: readonly Completion<string, number>[]) => Promise<readonly boolean[]>) {
  const due = ['a', 'b', 'c', 'd', 'e'];
  const calls: string[][] = [];
  const gates = new Map<string, () => void>();
  const t: Task<string, true, number> = {
    name: 'test_job',
    concurrency: 10,
    idleMs: 1000,
    claim: async (_now, limit) => due.splice(0, limit),
    queue: { renew: async () => new Set(), giveBack: async () => {} },
    dueAt: () => 0,
    installationOf: (item) => installationId(item === 'e' ? 'B' : 'A'),
    serve: servingAll(true as const),
    // Each item's work ends when the test says; `c` has more to say than its completion.
    run: (item) =>
      new Promise((resolve) => {
        gates.set(item, () =>
          resolve(
            item === 'c' ? { outcome: 'changed' } : { outcome: 'unchanged', completion: item.charCodeAt(0) },
          ),
        );
      }),
    async complete(done) {
      calls.push(done.map((d) => `${d.item}=${d.values} by ${d.lease.owner.split('/')[0]}`));
      return recorded(done);
    },
  };
  return { t, calls, finish: (item: string) => gates.get(item)?.() };
}

describe('the runner’s record of finished work', () => {
  it('records the items of one claim that finish together in one statement, and the one that wrote its own in none', async () => {
    const { t, calls, finish } = task(async (done) => done.map(() => true));
    const job = leased(t, LEASE, () => 0);
    const items = await job.claim(0, 10);
    const outcomes = Promise.all(items.map((item) => job.run(item)));
    for (const item of items) finish(item);
    expect(await outcomes).toEqual([
      { outcome: 'unchanged' },
      { outcome: 'unchanged' },
      { outcome: 'changed' },
      { outcome: 'unchanged' },
      { outcome: 'unchanged' },
    ]);
    expect(calls).toEqual([
      ['a=97 by instance-1', 'b=98 by instance-1', 'd=100 by instance-1', 'e=101 by instance-1'],
    ]);
  });

  it('records an item alone at once when no other item of the job still runs', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    try {
      const { t, calls, finish } = task(async (done) => done.map(() => true));
      const job = leased(t, LEASE, () => 0);
      const [only] = await job.claim(0, 1);
      const outcome = job.run(only as string);
      await vi.waitFor(() => expect(calls).toEqual([]));
      finish('a');
      // No timer advanced: the record did not wait for a window.
      expect(await outcome).toEqual({ outcome: 'unchanged' });
      expect(calls).toEqual([['a=97 by instance-1']]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('waits a little for items still running, then records those done without them', async () => {
    const { t, calls, finish } = task(async (done) => done.map(() => true));
    const job = leased(t, LEASE, () => 0);
    const [a, b] = await job.claim(0, 2);
    const first = job.run(a as string);
    const second = job.run(b as string);
    await vi.waitFor(() => expect(calls).toEqual([]));
    finish('a');
    expect(await first).toEqual({ outcome: 'unchanged' });
    expect(calls).toEqual([['a=97 by instance-1']]);
    finish('b');
    expect(await second).toEqual({ outcome: 'unchanged' });
    expect(calls).toEqual([['a=97 by instance-1'], ['b=98 by instance-1']]);
  });

  it('tells work whose lease was lost meanwhile that it was not recorded', async () => {
    const { t, finish } = task(async (done) => done.map((d) => d.item !== 'b'));
    const job = leased(t, LEASE, () => 0);
    const items = await job.claim(0, 2);
    const outcomes = Promise.all(items.map((item) => job.run(item)));
    for (const item of items) finish(item);
    expect(await outcomes).toEqual([{ outcome: 'unchanged' }, { outcome: 'lease_lost' }]);
  });

  it('fails the work of every item of a statement the store could not run', async () => {
    const failure = new Error('disk I/O error');
    const { t, finish } = task(async () => Promise.reject(failure));
    const job = leased(t, LEASE, () => 0);
    const items = await job.claim(0, 2);
    const outcomes = items.map((item) => job.run(item).catch((e: unknown) => e));
    for (const item of items) finish(item);
    expect(await Promise.all(outcomes)).toEqual([failure, failure]);
  });
});
