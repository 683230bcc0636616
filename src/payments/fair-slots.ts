import { BusyError } from './errors.js';

/**
 * The calls to the service one process makes at once, all keys together, shared fairly between
 * keys. `slots` is the size of the connection pool the calls go through, so a call that holds a
 * slot has a connection: its deadline can start then, and a call still waiting for a slot is not
 * yet talking to the service (it cannot time out, and tells the breaker nothing).
 *
 * - A key's calls run in the order they came; between keys, the next free slot goes to the key
 *   with the fewest calls running (among equals, the one whose turn came longest ago). A key with
 *   one call waiting goes ahead of a busy key's backlog.
 * - `reserve` slots are kept for keys with no call running: however busy the others, a key that
 *   asks once starts at once, as long as fewer than `reserve` such keys ask at the same moment
 *   (the first call of a burst is such a call too, so a busy key holds one of them at most, and
 *   only until that call ends). The busy keys share the rest.
 * - A call waits at most `maxWaitMs` for its slot, then fails with `BusyError` (nothing was sent);
 *   and a key may keep at most `maxQueue` calls waiting, beyond which a call fails at once.
 */
interface FairSlotsOptions {
  /** Calls running at once, all keys together: the connections of the pool they go through. */
  slots: number;
  /** Slots only a key with no call running may take (default 0: one key, nothing to keep). */
  reserve?: number;
  /** Milliseconds on a monotonic clock, as performance.now. */
  now?: () => number;
}

/** One key's part: its calls take their turns through it. */
export interface KeySlots {
  /**
   * Runs `work` once the key has its slot, and frees the slot when it settles. Rejects with
   * `BusyError` without running it when the key's queue is full, or when no slot came within
   * `maxWaitMs`.
   */
  run<T>(work: () => Promise<T>, maxWaitMs?: number): Promise<T>;
  /** Every call of this key still waiting for its slot fails with `error` now, its work never started. */
  releaseWaiting(error: Error): void;
  /** Calls of this key waiting for a slot. */
  readonly queued: number;
}

interface KeySlotsOptions {
  /** Calls of this key allowed to wait; beyond, a call fails at once with `BusyError`. */
  maxQueue?: number;
  /** Calls of this key running at once (default: every slot). */
  concurrency?: number;
}

export const DEFAULT_MAX_QUEUE = 1000;

/** Slots kept for quiet keys when many keys share `slots`: an eighth of them. */
export const quietReserve = (slots: number): number => Math.floor(slots / 8);

interface Waiter {
  grant: () => void;
  fail: (error: Error) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** What a key's part does with the slots it shares: one pair of functions per `FairSlots`, not per key. */
interface Engine {
  run<T>(key: Key, work: () => Promise<T>, maxWaitMs: number | undefined): Promise<T>;
  release(key: Key, error: Error): void;
}

/**
 * One key's part: a few fields (its calls running and waiting, its limits), its methods on the
 * prototype, so that a process keeping thousands of keys keeps little for each.
 */
class Key implements KeySlots {
  running = 0;
  readonly waiting: Waiter[] = [];

  constructor(
    private readonly engine: Engine,
    readonly maxQueue: number,
    readonly concurrency: number,
  ) {}

  run<T>(work: () => Promise<T>, maxWaitMs?: number): Promise<T> {
    return this.engine.run(this, work, maxWaitMs);
  }

  releaseWaiting(error: Error): void {
    this.engine.release(this, error);
  }

  get queued(): number {
    return this.waiting.length;
  }
}

export class FairSlots {
  readonly slots: number;
  readonly reserve: number;
  readonly #now: () => number;
  #running = 0;
  /** Keys with calls waiting, the one whose turn came longest ago first. */
  readonly #turns = new Set<Key>();
  readonly #engine: Engine = {
    run: (key, work, maxWaitMs) => this.#run(key, work, maxWaitMs),
    release: (key, error) => this.#release(key, error),
  };

  constructor(options: FairSlotsOptions) {
    this.slots = options.slots;
    this.reserve = Math.min(options.reserve ?? 0, options.slots - 1);
    this.#now = options.now ?? (() => performance.now());
  }

  /** Calls running now, all keys together. */
  get running(): number {
    return this.#running;
  }

  /** A new key's part (one per payments client, that is per API key). */
  key(options: KeySlotsOptions = {}): KeySlots {
    return new Key(this.#engine, options.maxQueue ?? DEFAULT_MAX_QUEUE, options.concurrency ?? this.slots);
  }

  async #run<T>(key: Key, work: () => Promise<T>, maxWaitMs: number | undefined): Promise<T> {
    if (key.waiting.length === 0 && this.#mayStart(key)) this.#start(key);
    else await this.#wait(key, maxWaitMs);
    try {
      return await work();
    } finally {
      key.running -= 1;
      this.#running -= 1;
      this.#grant();
    }
  }

  #mayStart(key: Key): boolean {
    if (this.#running >= this.slots || key.running >= key.concurrency) return false;
    return key.running === 0 || this.#running < this.slots - this.reserve;
  }

  #start(key: Key): void {
    key.running += 1;
    this.#running += 1;
  }

  /** Resolves once `grant` gave the key a slot (already counted as running). */
  #wait(key: Key, maxWaitMs: number | undefined): Promise<void> {
    if (key.waiting.length >= key.maxQueue) {
      return Promise.reject(new BusyError(key.waiting.length));
    }
    const since = this.#now();
    return new Promise<void>((grant, fail) => {
      const waiter: Waiter = { grant, fail, timer: undefined };
      if (maxWaitMs !== undefined) {
        waiter.timer = setTimeout(() => {
          key.waiting.splice(key.waiting.indexOf(waiter), 1);
          if (key.waiting.length === 0) this.#turns.delete(key);
          fail(new BusyError(key.waiting.length, Math.round(this.#now() - since)));
        }, maxWaitMs).unref();
      }
      key.waiting.push(waiter);
      this.#turns.add(key);
    });
  }

  /** Gives free slots to waiting calls, each to the key with the fewest running. */
  #grant(): void {
    for (;;) {
      let next: Key | undefined;
      for (const key of this.#turns) {
        if (this.#mayStart(key) && (next === undefined || key.running < next.running)) next = key;
      }
      const waiter = next?.waiting.shift();
      if (next === undefined || waiter === undefined) return;
      // To the back of the turns, or out of them.
      this.#turns.delete(next);
      if (next.waiting.length > 0) this.#turns.add(next);
      clearTimeout(waiter.timer);
      this.#start(next);
      waiter.grant();
    }
  }

  #release(key: Key, error: Error): void {
    this.#turns.delete(key);
    for (const waiter of key.waiting.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.fail(error);
    }
  }
}
