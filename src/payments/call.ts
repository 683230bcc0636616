import type { Dispatcher } from 'undici';
import { errorFromAnswer } from './answers.js';
import type { BreakerOutcome, CircuitBreaker } from './breaker.js';
import {
  CircuitOpenError,
  isPaymentError,
  PacedOutError,
  type PaymentError,
  PaymentTimeoutError,
  ServiceUnavailableError,
  UnexpectedResponseError,
} from './errors.js';
import type { KeySlots } from './fair-slots.js';
import type { CallReport, CallResult } from './health.js';
import { type RetryEnvironment, type RetryPolicy, retryDelay } from './retry.js';
import { type Answer, BodyTooLargeError, describeNetworkError, getText } from './wire.js';

/**
 * One call to the payment service: its turn, its deadline, its attempts and their retries, and
 * what the breaker and `onCall` hear of it.
 */

type Operation = 'balance' | 'invoice';

/** Where a call runs: its turns, its connections, and for background work its budget. */
export interface Lane {
  background: boolean;
  turns: KeySlots;
  dispatcher: Dispatcher;
  /** Waits for the key's next turn in its budget: true when the call may go, false when it had none in time (not made). */
  pace?: (deadline: AbortSignal) => Promise<boolean>;
}

/** Attempts made by one call, counted as they happen. */
interface Attempts {
  count: number;
  /** Whether a request went to the service (its deadline still running when it was sent). */
  sent: boolean;
}

/** What every call of one client shares: where it calls, with which key, and within what limits. */
export interface Caller {
  /** The origin of the service's `{base_url}`. */
  origin: string;
  /** The path of its `{base_url}`, without a trailing slash: what each call's path comes after. */
  prefix: string;
  headers: Record<string, string>;
  timeoutMs: number;
  maxWaitMs: number;
  maxBodyBytes: number;
  retry: RetryPolicy;
  world: RetryEnvironment;
  /** Takes the key out of any text from the service. */
  redact: (text: string) => string;
  breaker: CircuitBreaker;
  /** The deadlines of calls under way, to let them go when the breaker opens. */
  underWay: Set<AbortController>;
  logger: { warn(fields: object, message: string): void } | undefined;
  onCall: ((report: CallReport) => void) | undefined;
}

/** Runs one call and tells `onCall` how it ended. */
export async function observed<T>(
  caller: Caller,
  lane: Lane,
  operation: Operation,
  work: (tried: Attempts) => Promise<T>,
): Promise<T> {
  const { world } = caller;
  const started = world.now();
  const tried: Attempts = { count: 0, sent: false };
  const report = (result: CallResult) =>
    caller.onCall?.({
      operation,
      result,
      background: lane.background,
      attempts: tried.count,
      ms: world.now() - started,
    });
  try {
    const value = await work(tried);
    report('ok');
    return value;
  } catch (error) {
    if (isPaymentError(error)) report(error.code);
    throw error;
  }
}

/** One GET of `path`, its status, `Retry-After` and body read off the wire. */
const fetchOnce = (caller: Caller, lane: Lane, path: string, signal: AbortSignal): Promise<Answer> =>
  getText(lane.dispatcher, {
    origin: caller.origin,
    path: `${caller.prefix}${path}`,
    headers: caller.headers,
    signal,
    limit: caller.maxBodyBytes,
  });

/**
 * GET with the deadline and the retry policy; resolves with a 2xx answer, its body already
 * redacted, or rejects with a PaymentError. The deadline starts when the call gets its turn,
 * that is its connection; a call that never got one (`BusyError`) tells the breaker nothing.
 */
export async function get(
  caller: Caller,
  lane: Lane,
  path: string,
  operation: Operation,
  tried: Attempts,
): Promise<Answer> {
  const { breaker, underWay } = caller;
  if (breaker.state() === 'open') throw new CircuitOpenError();
  return lane.turns.run(async () => {
    const admission = breaker.admit();
    if (admission === undefined) throw new CircuitOpenError();
    // Not AbortSignal.timeout(): its timer cannot be cleared, so every call would leave one
    // running (and a DOMException to build) for the whole deadline after it has finished.
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), caller.timeoutMs).unref();
    underWay.add(controller);
    try {
      const answer = await attempts(caller, lane, path, operation, controller.signal, tried);
      breaker.record(admission, 'answered');
      // docs/payment-api.md#secrets: the key never reaches a view or a log through an answer.
      return { ...answer, body: caller.redact(answer.body) };
    } catch (error) {
      // A call the opening breaker let go tells it nothing more; one never sent, nothing at all.
      if (!(error instanceof CircuitOpenError))
        breaker.record(admission, tried.sent ? breakerOutcome(error) : 'not_sent');
      throw error;
    } finally {
      clearTimeout(timer);
      underWay.delete(controller);
    }
  }, caller.maxWaitMs);
}

/** Attempts the GET until an answer is a 2xx, the retry policy gives up, or the deadline ends it. */
async function attempts(
  caller: Caller,
  lane: Lane,
  path: string,
  operation: Operation,
  deadline: AbortSignal,
  tried: Attempts,
): Promise<Answer> {
  const { world, redact, timeoutMs } = caller;
  const startedAt = world.now();
  /** The last attempt's failure: what a retry the budget had no turn for ends with. */
  let last: PaymentError | undefined;
  for (let attempt = 0; ; attempt += 1) {
    // Its turn in the budget. A pace kept in the store fails as the store does; one with no turn
    // in time (PacedOutError) says so: either way no call is made.
    if (lane.pace && !(await lane.pace(deadline))) throw last ?? new PacedOutError();
    tried.count = attempt + 1;
    let failure: PaymentError;
    try {
      tried.sent ||= !deadline.aborted;
      const answer = await fetchOnce(caller, lane, path, deadline);
      if (answer.status >= 200 && answer.status < 300) return answer;
      failure = errorFromAnswer({ ...answer, redact });
    } catch (error) {
      if (deadline.aborted) throw ended(timeoutMs, deadline, error);
      if (error instanceof BodyTooLargeError) {
        throw new UnexpectedResponseError({ detail: error.message, cause: error });
      }
      failure = new ServiceUnavailableError(redact(describeNetworkError(error)), { cause: error });
    }
    last = failure;
    const remainingMs = timeoutMs - (world.now() - startedAt);
    const delayMs = retryDelay(failure, attempt, caller.retry, world.random);
    if (delayMs === undefined || delayMs >= remainingMs) throw failure;
    caller.logger?.warn(
      {
        operation,
        attempt: attempt + 1,
        code: failure.code,
        status: failure.status,
        delayMs: Math.round(delayMs),
      },
      'payment service call failed, retrying',
    );
    try {
      await world.sleep(delayMs, deadline);
    } catch (error) {
      throw ended(timeoutMs, deadline, error);
    }
  }
}

/** Why a call's deadline signal ended it: the breaker opened, or the deadline passed. */
function ended(timeoutMs: number, deadline: AbortSignal, cause: unknown): PaymentError {
  return deadline.reason instanceof CircuitOpenError
    ? deadline.reason
    : new PaymentTimeoutError(timeoutMs, { cause });
}

/** Timeouts, refused or reset connections and 5xx: the service is not answering. Anything else is an answer. */
const breakerOutcome = (error: unknown): BreakerOutcome =>
  error instanceof PaymentTimeoutError || error instanceof ServiceUnavailableError
    ? 'not_answered'
    : 'answered';
