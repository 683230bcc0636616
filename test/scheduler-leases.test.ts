import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { MAX_RENEWALS } from '../src/runner/holdings.js';
import { LeaseLost } from '../src/runner/leases.js';
import { type HeldLease, leased, type Task, UNSERVED_RETRY_MS } from '../src/scheduler.js';
import { installationId } from '../src/store/keys.js';
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
    queue: {
      async renew(tokens) {
        renewals.push([...tokens]);
        const answer = kept(tokens);
        if (answer instanceof Error) throw answer;
        return answer;
      },
      giveBack: async () => {},
    },
    dueAt: () => 0,
    installationOf: () => installationId(''),
    serve: async (installations) => new Map(installations.map((id) => [id, true])),
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

  it('renews a claim for MAX_RENEWALS leases at most, then lets stuck work’s lease go, saying so', async () => {
    const { task, renewals, leases } = slowTask((tokens) => new Set(tokens));
    const logs = captureLogs();
    const job = leased(task, LEASE, Date.now, logs.logger);
    const [stuck] = await job.claim(0, 1);
    void job.run(stuck as string);
    await sleep(LEASE.ms * 3);
    expect(leases.get(stuck as string)?.lost).toBe(false);
    await sleep(LEASE.ms * (MAX_RENEWALS - 2));
    await expect.poll(() => leases.get(stuck as string)?.lost, { timeout: 2000 }).toBe(true);
    const renewed = renewals.length;
    await sleep(LEASE.ms);
    expect(renewals).toHaveLength(renewed);
    expect(logs.lines.filter((l) => l.msg === 'work ran far past its lease: let go')).toHaveLength(1);
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

describe('a task under the lease (leased)', () => {
  interface Item {
    id: string;
    installation: string;
  }
  const LEASE = { owner: 'instance-1', ms: 30_000 };
  function task(serveable: ReadonlySet<string>) {
    const claims: { lease: unknown; busy: Record<string, number> }[] = [];
    const postponed: string[] = [];
    const ran: string[] = [];
    const due: Item[] = [
      { id: 'a1', installation: 'A' },
      { id: 'a2', installation: 'A' },
      { id: 'b1', installation: 'B' },
      { id: 'w1', installation: '' },
    ];
    const t: Task<Item, string> = {
      name: 'test_job',
      concurrency: 4,
      idleMs: 1000,
      async claim(_now, limit, lease, busy) {
        claims.push({ lease, busy: Object.fromEntries(busy) });
        return due.splice(0, limit);
      },
      queue: {
        renew: async () => new Set(),
        async giveBack(item, owner, until) {
          postponed.push(`${item.id} until ${until} by ${owner}`);
        },
      },
      dueAt: () => 0,
      installationOf: (item) => installationId(item.installation),
      describe: (item) => ({ channel: item.id }),
      about: (item) => ({ invoiceId: item.id }),
      serveEach: async (installation) => {
        if (installation === 'T0BROKEN') throw new Error('the store went away');
        return serveable.has(installation) ? `part of ${installation}` : undefined;
      },
      async run(item, part) {
        ran.push(`${item.id} with ${part}`);
        return { outcome: 'sent' };
      },
    };
    return { t, claims, postponed, ran };
  }

  it('runs each item with what its installation lends, and gives back for a minute, uncalled, those of one that cannot be served', async () => {
    const { t, postponed, ran } = task(new Set(['A', '']));
    const job = leased(t, LEASE, () => 1_000);
    const items = await job.claim(0, 10);
    const outcomes = await Promise.all(items.map((item) => job.run(item)));
    expect(ran).toEqual(['a1 with part of A', 'a2 with part of A', 'w1 with part of ']);
    expect(postponed).toEqual([
      expect.stringMatching(`^b1 until ${1_000 + UNSERVED_RETRY_MS} by instance-1/`),
    ]);
    expect(outcomes).toEqual([
      { outcome: 'sent' },
      { outcome: 'sent' },
      { outcome: 'paused', invoiceId: 'b1' },
      { outcome: 'sent' },
    ]);
    expect(UNSERVED_RETRY_MS).toBe(60_000);
  });

  it('claims under a token of its own each time, telling the claim how many items of each installation still run here', async () => {
    const { t, claims } = task(new Set(['A']));
    const job = leased(t, LEASE, () => 0);
    const [a1, a2, b1] = await job.claim(0, 3);
    await job.run(a1 as Item);
    await job.claim(0, 1);
    await job.run(a2 as Item);
    await job.run(b1 as Item);
    await job.claim(0, 1);
    const token = { owner: expect.stringMatching(/^instance-1\/./), ms: LEASE.ms };
    expect(claims).toEqual([
      { lease: token, busy: {} },
      { lease: token, busy: { A: 1, B: 1 } },
      { lease: token, busy: { '': 1 } },
    ]);
    expect(new Set(claims.map((c) => (c.lease as { owner: string }).owner)).size).toBe(3);
  });

  it('names the installation in the log line, but not the one workspace', async () => {
    const job = leased(task(new Set()).t, LEASE, () => 0);
    expect(job.describe?.({ id: 'b1', installation: 'B' })).toEqual({ installation: 'B', channel: 'b1' });
    expect(job.describe?.({ id: 'w1', installation: '' })).toEqual({ channel: 'w1' });
    expect([job.name, job.concurrency, job.idleMs]).toEqual(['test_job', 4, 1000]);
    // Neither a claim batch nor a next due time where the task has none: the loop's defaults hold.
    expect(Object.keys(job)).not.toContain('claimBatch');
    expect(Object.keys(job)).not.toContain('nextDueAt');
    const batched = leased(
      { ...task(new Set()).t, claimBatch: 2, nextDueAt: async (now) => now + 5 },
      LEASE,
      () => 0,
    );
    expect(batched.claimBatch).toBe(2);
    expect(await batched.nextDueAt?.(10)).toBe(15);
  });

  it('ends an item whose fenced write found its lease lost as lease_lost, whatever the job, and frees its slot', async () => {
    const { t, claims } = task(new Set(['A']));
    t.run = async () => {
      throw new LeaseLost();
    };
    const job = leased(t, LEASE, () => 0);
    const [a1] = await job.claim(0, 1);
    expect(await job.run(a1 as Item)).toEqual({ outcome: 'lease_lost', invoiceId: 'a1' });
    await job.claim(0, 1);
    expect(claims.at(-1)?.busy).toEqual({});
  });

  it('gives back the items of an installation that failed to serve, says so in the log, and serves the others', async () => {
    const { t, postponed, ran } = task(new Set(['A']));
    const logs = captureLogs();
    const job = leased(
      {
        ...t,
        claim: async () => [
          { id: 'x1', installation: 'T0BROKEN' },
          { id: 'a9', installation: 'A' },
        ],
      },
      LEASE,
      () => 0,
      logs.logger,
    );
    const items = await job.claim(0, 2);
    expect(await Promise.all(items.map((item) => job.run(item)))).toEqual([
      { outcome: 'paused', invoiceId: 'x1' },
      { outcome: 'sent' },
    ]);
    expect(ran).toEqual(['a9 with part of A']);
    expect(postponed).toEqual([expect.stringMatching(/^x1 until 60000 by instance-1\//)]);
    expect(logs.lines).toEqual([
      expect.objectContaining({
        level: 'warn',
        installation: 'T0BROKEN',
        job: 'test_job',
        msg: 'could not serve an installation of claimed work: its items are given back',
      }),
    ]);
  });

  it('releases an installation’s slot even when its work throws', async () => {
    const { t, claims } = task(new Set(['A']));
    t.run = async () => {
      throw new Error('a bug');
    };
    const job = leased(t, LEASE, () => 0);
    const [a1] = await job.claim(0, 1);
    await expect(job.run(a1 as Item)).rejects.toThrow('a bug');
    await job.claim(0, 1);
    expect(claims.at(-1)?.busy).toEqual({});
  });
});
