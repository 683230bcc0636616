/**
 * Concurrent calls with the same key share one execution: the first starts it, the others join,
 * and all see the same result or error. Nothing is kept once it settles (no caching). Callers
 * use distinct keys for distinct results. Idle, it holds nothing (one per API key, thousands kept).
 */
export class SingleFlight {
  #inFlight: Map<string, Promise<unknown>> | undefined;

  /** The call in flight under `key`, if there is one. */
  join<T>(key: string): Promise<T> | undefined {
    return this.#inFlight?.get(key) as Promise<T> | undefined;
  }

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const pending = this.join<T>(key);
    if (pending) return pending;
    const inFlight = this.#inFlight ?? new Map<string, Promise<unknown>>();
    this.#inFlight = inFlight;
    const started = work().finally(() => {
      inFlight.delete(key);
      if (inFlight.size === 0 && this.#inFlight === inFlight) this.#inFlight = undefined;
    });
    inFlight.set(key, started);
    return started;
  }
}
