/**
 * A circuit breaker for one payment-service origin, shared by every client of that origin (one
 * per API key once many merchants share a process): an outage is the service's, not a key's.
 *
 * - closed: calls go through; `threshold` failures in a row (timeouts, refused or reset
 *   connections, 5xx: the service not answering) open it.
 * - open: calls fail at once, and calls waiting for a turn are let go (`onOpen`), for `openMs`.
 * - half-open: once `openMs` has passed, the next call is the probe, one at a time; the others
 *   still fail at once. The probe's success closes the breaker; its failure opens it again.
 *
 * Any answer counts as a success, a 401 or a 400 included: the service is there, and a rejected
 * key says nothing about another key. A call that never reached the service (it waited for a
 * connection, or for its budget, until its time ran out) says nothing either way. State is read
 * lazily from the clock: no timer runs.
 */

export type BreakerState = 'closed' | 'open' | 'half_open';

/**
 * How an admitted call ended, as far as the breaker cares: the service answered, it did not
 * (a call sent and timed out, refused or reset, or a 5xx), or no request was sent at all.
 */
export type BreakerOutcome = 'answered' | 'not_answered' | 'not_sent';

interface BreakerOptions {
  /** Failures in a row that open the breaker. */
  threshold?: number;
  /** How long the breaker stays open before one probe may go. */
  openMs?: number;
  /** Milliseconds on a monotonic clock, as performance.now. */
  now?: () => number;
}

const DEFAULT_BREAKER_THRESHOLD = 5;
const DEFAULT_BREAKER_OPEN_MS = 10_000;

/** What a call was given by `admit()`: report its outcome with it. */
interface Admission {
  readonly probe: boolean;
}

export class CircuitBreaker {
  readonly #threshold: number;
  readonly #openMs: number;
  readonly #now: () => number;
  #failures = 0;
  #openedAt: number | undefined;
  #probing = false;
  readonly #listeners = new Set<(state: BreakerState) => void>();

  constructor(options: BreakerOptions = {}) {
    this.#threshold = options.threshold ?? DEFAULT_BREAKER_THRESHOLD;
    this.#openMs = options.openMs ?? DEFAULT_BREAKER_OPEN_MS;
    this.#now = options.now ?? (() => performance.now());
  }

  /** The state now: `half_open` means a probe may go (none is in flight). */
  state(): BreakerState {
    if (this.#openedAt === undefined) return 'closed';
    return !this.#probing && this.#now() - this.#openedAt >= this.#openMs ? 'half_open' : 'open';
  }

  /** Lets a call go (`undefined`: refused, the breaker is open or its probe is in flight). */
  admit(): Admission | undefined {
    const state = this.state();
    if (state === 'open') return undefined;
    if (state === 'half_open') {
      this.#probing = true;
      return { probe: true };
    }
    return { probe: false };
  }

  /** How an admitted call ended. */
  record(admission: Admission, outcome: BreakerOutcome): void {
    if (outcome === 'not_sent') {
      // It tells nothing: the next call may probe instead.
      if (admission.probe) this.#probing = false;
      return;
    }
    if (outcome === 'answered') {
      this.#failures = 0;
      this.#probing = false;
      if (this.#openedAt !== undefined) {
        this.#openedAt = undefined;
        this.#emit('closed');
      }
      return;
    }
    if (admission.probe) {
      this.#probing = false;
      // Unless a call already under way was answered meanwhile and closed it.
      if (this.#openedAt !== undefined) this.#open();
      return;
    }
    // A call that was already under way when the breaker opened changes nothing.
    if (this.#openedAt !== undefined) return;
    this.#failures += 1;
    if (this.#failures >= this.#threshold) this.#open();
  }

  /** Told of every change: `open` when it opens (or opens again after a failed probe), `closed`. */
  onChange(listener: (state: BreakerState) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #open(): void {
    this.#openedAt = this.#now();
    this.#emit('open');
  }

  #emit(state: BreakerState): void {
    for (const listener of this.#listeners) listener(state);
  }
}
