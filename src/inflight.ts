import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Work still running after its request was acknowledged (replies through `response_url`,
 * unfurls), so a graceful stop can wait for it instead of cutting people off mid-answer.
 */
export class Inflight {
  readonly #pending = new Set<Promise<unknown>>();

  /** Runs `work` and remembers it until it settles. */
  run<T>(work: () => Promise<T>): Promise<T> {
    const promise = work();
    this.#pending.add(promise);
    const forget = () => this.#pending.delete(promise);
    promise.then(forget, forget);
    return promise;
  }

  get size(): number {
    return this.#pending.size;
  }

  /** Resolves `true` once everything in flight has settled, or `false` after `timeoutMs`. */
  async drain(timeoutMs: number): Promise<boolean> {
    const ac = new AbortController();
    const settled = (async () => {
      while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
      return true;
    })();
    const timedOut = sleep(timeoutMs, false, { signal: ac.signal }).catch(() => false);
    try {
      return await Promise.race([settled, timedOut]);
    } finally {
      ac.abort();
    }
  }
}
