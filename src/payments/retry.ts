import { setTimeout as sleepFor } from 'node:timers/promises';
import { type PaymentError, RateLimitedError, ServiceUnavailableError } from './errors.js';

/** How a call tries again within its one deadline (docs/payment-api.md#limits). */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** Backoff before retry n (0-based) is random in [0, min(maxDelayMs, baseDelayMs * 2^n)). */
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxRetries: 2, baseDelayMs: 200, maxDelayMs: 2000 };

/** What the retry loop reads from the world; tests replace it to check delays exactly. */
export interface RetryEnvironment {
  /** A number in [0, 1), as Math.random. */
  random: () => number;
  /** Milliseconds on a monotonic clock, as performance.now. */
  now: () => number;
  /** Waits `ms`, or rejects when `signal` aborts first. */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
}

export const REAL_WORLD: RetryEnvironment = {
  random: Math.random,
  now: () => performance.now(),
  sleep: (ms, signal) => sleepFor(ms, undefined, { signal }),
};

/**
 * The backoff before the next attempt, or undefined when there is none. Connection errors, 429
 * and 502/503/504 are retried; never 400, 401 or a broken body.
 */
export function retryDelay(
  failure: PaymentError,
  attempt: number,
  policy: RetryPolicy,
  random: () => number,
): number | undefined {
  if (attempt >= policy.maxRetries) return undefined;
  const retryable =
    failure instanceof RateLimitedError ||
    (failure instanceof ServiceUnavailableError &&
      (failure.status === undefined || [502, 503, 504].includes(failure.status)));
  if (!retryable) return undefined;
  if (failure instanceof RateLimitedError && failure.retryAfterMs !== undefined) return failure.retryAfterMs;
  return random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
}
