import type { OutboxRow } from '../../src/outbox.js';
import type { Tracked } from '../../src/pipeline/tracked.js';
import type { Job } from '../../src/scheduler.js';

/** Any job, as far as running its due items goes (Job<T> itself is invariant in T). */
interface DueWork {
  claim(now: number, limit: number): Promise<unknown[]>;
  run(item: never): Promise<Tracked>;
}

/**
 * What the scheduler does at one moment, minus the timers: runs every piece of work the jobs
 * have due at `now`, then delivers everything the outbox holds. Resolves with what each came to.
 */
export async function runDue(
  jobs: readonly DueWork[],
  outbox: Job<OutboxRow>,
  now: number,
  limit = 100,
): Promise<Tracked[]> {
  const results: Tracked[] = [];
  for (const job of jobs)
    for (const row of await job.claim(now, limit)) results.push(await job.run(row as never));
  for (let batch = await outbox.claim(now, limit); batch.length > 0; batch = await outbox.claim(now, limit)) {
    for (const row of batch) results.push(await outbox.run(row));
  }
  return results;
}
