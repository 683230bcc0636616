/**
 * Concurrent calls with the same key share one execution: the first starts it, the others join,
 * and all see the same result or error. Nothing is kept once it settles (no caching).
 */
export class SingleFlight<T> {
  readonly #inFlight = new Map<string, Promise<T>>();

  run(key: string, work: () => Promise<T>): Promise<T> {
    const pending = this.#inFlight.get(key);
    if (pending) return pending;
    const started = work().finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, started);
    return started;
  }
}
