import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.js';

/** A lease: its token (`owner`), and how long it holds (the scheduler's `Lease`). */
interface Lease {
  readonly owner: string;
  readonly ms: number;
}

/** A claim's lease as its items run: `lost` set by a renewal that finds it gone. */
interface Holding {
  lease: { owner: string; ms: number; lost: boolean };
  /** Its items still running. */
  running: number;
  /** When it was claimed, on the monotonic clock. */
  since: number;
}

/**
 * A claim is renewed for at most this many leases (five minutes of a 30 s lease): work still
 * running then is stuck (a call or a query that never answers), and its lease is let go, so
 * another claim takes the item over instead of it being held for as long as the process lives.
 */
export const MAX_RENEWALS = 10;

/**
 * The leases of a task's running items, each claim's renewed every third of the lease while any
 * of its items runs (one statement a tick for all of them), so work that outlives its lease keeps
 * it, and no second attempt starts while the first still runs.
 */
export function holdings<T>(
  task: {
    readonly name: string;
    renew(tokens: readonly string[], now: number, leaseMs: number): Promise<ReadonlySet<string>>;
  },
  lease: Lease,
  clock: () => number,
  logger: Pick<Logger, 'warn'> | undefined,
) {
  const byToken = new Map<string, Holding>();
  const byItem = new Map<T, Holding>();
  let timer: NodeJS.Timeout | undefined;
  let renewing = false;
  async function renew(): Promise<void> {
    if (renewing) return;
    renewing = true;
    const now = performance.now();
    for (const [token, holding] of byToken) {
      if (now - holding.since < lease.ms * MAX_RENEWALS || holding.lease.lost) continue;
      holding.lease.lost = true;
      logger?.warn(
        { job: task.name, runningMs: Math.round(now - holding.since) },
        'work ran far past its lease: let go',
      );
      byToken.delete(token);
    }
    const tokens = [...byToken.keys()];
    if (tokens.length === 0) return;
    try {
      const kept = await task.renew(tokens, clock(), lease.ms);
      for (const token of tokens) {
        const holding = byToken.get(token);
        if (holding && !kept.has(token)) holding.lease.lost = true;
      }
    } catch (error) {
      // The rows' fence still holds: a lease that ran out meanwhile refuses the work's writes.
      logger?.warn({ err: error, job: task.name }, 'could not renew the leases of running work');
    } finally {
      renewing = false;
    }
  }
  return {
    /** A fresh lease for one claim: this instance's name and a token no other claim has. */
    fresh: (): Lease => ({ owner: `${lease.owner}/${randomUUID()}`, ms: lease.ms }),
    /** An item claimed under `claimed` runs from now on: its lease is renewed until it is let go. */
    hold(item: T, claimed: Lease): void {
      const holding = byToken.get(claimed.owner) ?? {
        lease: { ...claimed, lost: false },
        running: 0,
        since: performance.now(),
      };
      holding.running += 1;
      byToken.set(claimed.owner, holding);
      byItem.set(item, holding);
      timer ??= setInterval(() => void renew(), lease.ms / 3).unref();
    },
    of(item: T): Lease & { readonly lost: boolean } {
      const holding = byItem.get(item);
      if (!holding) throw new Error(`${task.name}: an item run without being claimed`);
      return holding.lease;
    },
    letGo(item: T): void {
      const holding = byItem.get(item);
      byItem.delete(item);
      if (!holding) return;
      holding.running -= 1;
      if (holding.running === 0) byToken.delete(holding.lease.owner);
      if (byToken.size === 0 && timer) {
        clearInterval(timer);
        timer = undefined;
      }
    },
  };
}
