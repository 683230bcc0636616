import { describe, expect, it } from 'vitest';
import { Inflight } from '../src/inflight.js';
import { createScheduler, type Job } from '../src/scheduler.js';
import { captureLogs } from './support/bolt.js';

interface Item {
  id: number;
  due: number;
}

/** A job over a list of due items, recording what ran and how many ran at once. */
function listJob(items: Item[], opts: { concurrency?: number; runMs?: number; failClaims?: number } = {}) {
  const ran: number[] = [];
  let running = 0;
  let most = 0;
  let failClaims = opts.failClaims ?? 0;
  const job: Job<Item> = {
    name: 'list',
    concurrency: opts.concurrency ?? 2,
    idleMs: 20,
    dueAt: (item) => item.due,
    async claim(_now, limit) {
      if (failClaims > 0) {
        failClaims -= 1;
        throw new Error('database down');
      }
      return items.splice(0, limit);
    },
    async run(item) {
      running += 1;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, opts.runMs ?? 5));
      running -= 1;
      ran.push(item.id);
      return { outcome: 'ok', quiet: item.id % 2 === 0 };
    },
  };
  return { job, ran, most: () => most };
}

const until = (check: () => boolean, ms = 2000) =>
  expect.poll(check, { timeout: ms, interval: 5 }).toBe(true);

describe('scheduler', () => {
  it('runs every due item, no more at once than the job’s concurrency, and logs each', async () => {
    const logs = captureLogs();
    const items = Array.from({ length: 7 }, (_, i) => ({ id: i, due: 1000 - i }));
    const { job, ran, most } = listJob(items, { concurrency: 3, runMs: 10 });
    const lags: number[] = [];
    const scheduler = createScheduler(
      {
        logger: logs.logger,
        inflight: new Inflight(),
        clock: () => 1000,
        onLag: (_job, lag) => lags.push(lag),
      },
      [job],
    );
    scheduler.start();
    await until(() => ran.length === 7);
    await scheduler.stop();
    expect(ran.sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(most()).toBe(3);
    expect(lags).toEqual([0, 1, 2, 3, 4, 5, 6]);
    const lines = logs.lines.filter((l) => l.msg === 'job list');
    expect(lines.map((l) => l.level).sort()).toEqual([
      'debug',
      'debug',
      'debug',
      'debug',
      'info',
      'info',
      'info',
    ]);
    expect(lines[0]).toMatchObject({ kind: 'job', name: 'list', outcome: 'ok' });
  });

  it('counts and logs each item under the installation it belongs to, when the job says', async () => {
    const logs = captureLogs();
    const counted: string[] = [];
    const { job, ran } = listJob([
      { id: 1, due: 0 },
      { id: 2, due: 0 },
    ]);
    const scheduler = createScheduler(
      {
        logger: logs.logger,
        inflight: new Inflight(),
        clock: () => 1000,
        metrics: {
          request: (_kind, _name, outcome, _s, installation) => counted.push(`${installation}:${outcome}`),
        },
      },
      [
        {
          ...job,
          describe: (item: Item) => ({ installation: item.id === 1 ? 'T0ONE' : undefined }),
        } as Job<Item>,
      ],
    );
    scheduler.start();
    await until(() => ran.length === 2);
    await scheduler.stop();
    expect(counted.sort()).toEqual(['T0ONE:ok', 'undefined:ok']);
    expect(logs.lines.find((l) => l.msg === 'job list' && l.installation === 'T0ONE')).toBeDefined();
  });

  it('with a claim batch, claims only once that many slots are free, then as many as are', async () => {
    const items = Array.from({ length: 12 }, (_, i) => ({ id: i, due: 0 }));
    const { job, ran } = listJob(items, { concurrency: 4 });
    const limits: number[] = [];
    // Items end one by one, when the test lets them.
    const release: (() => void)[] = [];
    const batched: Job<Item> = {
      ...job,
      claimBatch: 3,
      claim: async (now, limit) => {
        limits.push(limit);
        return job.claim(now, limit);
      },
      run: (item) =>
        new Promise((resolve) => {
          release.push(() => {
            ran.push(item.id);
            resolve({ outcome: 'ok' });
          });
        }),
    };
    const scheduler = createScheduler(
      { logger: captureLogs().logger, inflight: new Inflight(), clock: () => 0 },
      [batched],
    );
    scheduler.start();
    await until(() => release.length === 4);
    const settle = () => new Promise((r) => setTimeout(r, 30));
    for (let i = 0; i < 2; i += 1) release.shift()?.();
    await settle();
    // Two free: fewer than the batch, nothing claimed.
    expect(limits).toEqual([4]);
    release.shift()?.();
    await until(() => limits.length === 2);
    expect(limits).toEqual([4, 3]);
    await settle();
    expect(release).toHaveLength(4);
    while (release.length > 0) release.shift()?.();
    await until(() => ran.length === 7);
    await scheduler.stop();
  });

  it('picks up new work at once when woken, not at its next idle tick', async () => {
    const items: Item[] = [];
    const { job, ran } = listJob(items);
    const slow = { ...job, idleMs: 60_000 };
    const scheduler = createScheduler(
      { logger: captureLogs().logger, inflight: new Inflight(), clock: () => 0 },
      [slow],
    );
    scheduler.start();
    await new Promise((r) => setTimeout(r, 20));
    items.push({ id: 1, due: 0 });
    scheduler.wake('list');
    await until(() => ran.length === 1, 500);
    await scheduler.stop();
  });

  it('logs a failed claim and tries again', async () => {
    const logs = captureLogs();
    const { job, ran } = listJob([{ id: 1, due: 0 }], { failClaims: 2 });
    const scheduler = createScheduler(
      { logger: logs.logger, inflight: new Inflight(), clock: () => 0, claimRetryMs: 10 },
      [job],
    );
    scheduler.start();
    await until(() => ran.length === 1);
    await scheduler.stop();
    expect(logs.lines.filter((l) => l.msg === 'could not claim background work' && 'err' in l)).toHaveLength(
      2,
    );
  });

  it('claims nothing after stop, and the items running finish in flight', async () => {
    const inflight = new Inflight();
    const items = Array.from({ length: 4 }, (_, i) => ({ id: i, due: 0 }));
    const { job, ran } = listJob(items, { concurrency: 2, runMs: 50 });
    const scheduler = createScheduler({ logger: captureLogs().logger, inflight, clock: () => 0 }, [job]);
    scheduler.start();
    await until(() => inflight.size === 2);
    await scheduler.stop();
    expect(await inflight.drain(1000)).toBe(true);
    expect(ran).toHaveLength(2);
    expect(items).toHaveLength(2);
  });

  it.each([
    ['claiming', false],
    ['waiting to retry a failed claim', true],
  ])('stops at once when the stop comes while it is %s, not after a long idle tick', async (_when, fails) => {
    let claimed: () => void = () => undefined;
    const job: Job<Item> = {
      ...listJob([]).job,
      idleMs: 60_000,
      claim: () =>
        new Promise((resolve, reject) => {
          claimed = () => (fails ? reject(new Error('database down')) : resolve([]));
        }),
    };
    const scheduler = createScheduler(
      { logger: captureLogs().logger, inflight: new Inflight(), clock: () => 0, claimRetryMs: 60_000 },
      [job],
    );
    scheduler.start();
    await new Promise((r) => setTimeout(r, 10));
    const stopping = scheduler.stop();
    claimed();
    const started = Date.now();
    await stopping;
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('sleeps only until the next item is due when the job can tell, and a tick when it cannot', async () => {
    const items: Item[] = [];
    const { job, ran } = listJob(items);
    const startedAt = Date.now();
    const soon: Job<Item> = { ...job, idleMs: 60_000, nextDueAt: async () => startedAt + 100 };
    const scheduler = createScheduler(
      { logger: captureLogs().logger, inflight: new Inflight(), clock: Date.now },
      [soon],
    );
    scheduler.start();
    items.push({ id: 1, due: 0 });
    await until(() => ran.length === 1, 1000);
    await scheduler.stop();

    const unsure: Job<Item> = {
      ...job,
      idleMs: 20,
      nextDueAt: async () => {
        throw new Error('store down');
      },
    };
    const again = createScheduler(
      { logger: captureLogs().logger, inflight: new Inflight(), clock: Date.now },
      [unsure],
    );
    again.start();
    await new Promise((r) => setTimeout(r, 30));
    items.push({ id: 2, due: 0 });
    await until(() => ran.length === 2, 1000);
    await again.stop();
  });

  it('looks again only once a tick while due work cannot be claimed (background paused), not in a spin', async () => {
    const { job } = listJob([]);
    let claims = 0;
    const paused: Job<Item> = {
      ...job,
      idleMs: 50,
      claim: async () => {
        claims += 1;
        return [];
      },
      nextDueAt: async (now) => now - 1000,
    };
    const scheduler = createScheduler(
      { logger: captureLogs().logger, inflight: new Inflight(), clock: Date.now },
      [paused],
    );
    scheduler.start();
    await new Promise((r) => setTimeout(r, 300));
    await scheduler.stop();
    expect(claims).toBeGreaterThanOrEqual(2);
    expect(claims).toBeLessThanOrEqual(8);
  });

  it('keeps running when an item throws: internal_error in the log', async () => {
    const logs = captureLogs();
    const { job } = listJob([]);
    let calls = 0;
    const failing: Job<Item> = {
      ...job,
      claim: async () => (calls++ === 0 ? [{ id: 1, due: 0 }] : []),
      run: async () => {
        throw new TypeError('bug');
      },
    };
    const scheduler = createScheduler({ logger: logs.logger, inflight: new Inflight(), clock: () => 0 }, [
      failing,
    ]);
    scheduler.start();
    await until(() => logs.lines.some((l) => l.outcome === 'internal_error'));
    await scheduler.stop();
    expect(logs.lines.find((l) => l.level === 'error')).toMatchObject({ msg: 'job list failed', err: {} });
  });
});

describe('scheduler, all slots busy', () => {
  it('waits for a slot to free up instead of asking the store again and again', async () => {
    let claims = 0;
    let looks = 0;
    let release: () => void = () => undefined;
    const job: Job<Item> = {
      name: 'busy',
      concurrency: 1,
      idleMs: 10_000,
      dueAt: () => 0,
      nextDueAt: async () => {
        looks += 1;
        return 0; // always something due
      },
      claim: async () => {
        claims += 1;
        return [{ id: claims, due: 0 }];
      },
      run: () =>
        new Promise((resolve) => {
          release = () => resolve({ outcome: 'ok' });
        }),
    };
    const scheduler = createScheduler(
      { logger: captureLogs().logger, inflight: new Inflight(), clock: () => 0 },
      [job],
    );
    scheduler.start();
    await new Promise((r) => setTimeout(r, 200));
    expect(claims).toBe(1);
    expect(looks).toBe(0); // no spinning on "what is due next?" while the only slot is taken
    release();
    await until(() => claims === 2, 1000);
    await new Promise((r) => setTimeout(r, 100));
    expect(claims).toBe(2);
    release();
    const stopping = scheduler.stop();
    release();
    await stopping;
  });
});

describe('scheduler: no busy loop', () => {
  /** A job that finds nothing due, counting how often it looks. */
  const idle = (name: string, nextDueAt?: Job<Item>['nextDueAt']) => {
    const job: Job<Item> & { claims: number } = {
      name,
      concurrency: 2,
      idleMs: 1000,
      dueAt: (item) => item.due,
      claims: 0,
      async claim() {
        job.claims += 1;
        return [];
      },
      run: async () => ({ outcome: 'ok' }),
      ...(nextDueAt ? { nextDueAt } : {}),
    };
    return job;
  };

  it('looks once and then sleeps when nothing is due, whatever the job says of its next item', async () => {
    const jobs = [
      idle('no_next_due'),
      idle('nothing_due', async () => undefined),
      idle('due_later', async (now) => now + 5000),
      idle('cannot_tell', async () => {
        throw new Error('store down');
      }),
    ];
    const scheduler = createScheduler(
      { logger: captureLogs().logger, inflight: new Inflight(), clock: Date.now },
      jobs,
    );
    scheduler.start();
    await new Promise((r) => setTimeout(r, 150));
    await scheduler.stop();
    expect(jobs.map((j) => `${j.name} ${j.claims}`)).toEqual([
      'no_next_due 1',
      'nothing_due 1',
      'due_later 1',
      'cannot_tell 1',
    ]);
  });

  it('wakes only the job it names, or every job when it names none', async () => {
    const [a, b] = [idle('a'), idle('b')];
    const scheduler = createScheduler(
      { logger: captureLogs().logger, inflight: new Inflight(), clock: Date.now },
      [a, b],
    );
    scheduler.start();
    await until(() => a.claims === 1 && b.claims === 1);
    scheduler.wake('a');
    await until(() => a.claims === 2);
    await new Promise((r) => setTimeout(r, 50));
    expect([a.claims, b.claims]).toEqual([2, 1]);
    scheduler.wake();
    await until(() => a.claims === 3 && b.claims === 2);
    await scheduler.stop();
  });
});
