import { setTimeout as sleepFor } from 'node:timers/promises';
import { parse as parseJson } from 'lossless-json';
import { type Dispatcher, request } from 'undici';
import { z } from 'zod';
import { createRedactor } from '../redact.js';
import { cut } from '../text.js';
import { errorFromAnswer } from './answers.js';
import { type BreakerOutcome, CircuitBreaker } from './breaker.js';
import {
  BusyError,
  CircuitOpenError,
  InvoiceNotFoundError,
  isPaymentError,
  type PaymentError,
  PaymentTimeoutError,
  RateLimitedError,
  ServiceError,
  ServiceUnavailableError,
  UnexpectedResponseError,
} from './errors.js';
import type { CallReport, CallResult } from './health.js';
import { type InvoiceId, parseInvoiceId } from './invoice-id.js';
import { Limiter, QueueFullError } from './limiter.js';
import { type BalanceEntry, balanceResponseSchema, type Invoice, invoiceSchema } from './schemas.js';
import { SingleFlight } from './single-flight.js';

export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** Backoff before retry n (0-based) is random in [0, min(maxDelayMs, baseDelayMs * 2^n)). */
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxRetries: 2, baseDelayMs: 200, maxDelayMs: 2000 };
const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const SNIPPET_LENGTH = 200;
/** Calls to the service at once, and calls allowed to wait for a turn (docs/payment-api.md#limits). */
export const DEFAULT_CONCURRENCY = 32;
export const DEFAULT_MAX_QUEUE = 1000;

/** What the retry loop reads from the world; tests replace it to check delays exactly. */
export interface RetryEnvironment {
  /** A number in [0, 1), as Math.random. */
  random: () => number;
  /** Milliseconds on a monotonic clock, as performance.now. */
  now: () => number;
  /** Waits `ms`, or rejects when `signal` aborts first. */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
}

const REAL_WORLD: RetryEnvironment = {
  random: Math.random,
  now: () => performance.now(),
  sleep: (ms, signal) => sleepFor(ms, undefined, { signal }),
};

export type Operation = 'balance' | 'invoice';

export interface PaymentsClientOptions {
  /** The service's `{base_url}`; paths `/api/v2/...` are appended to it. */
  baseUrl: string;
  apiKey: string;
  /**
   * The keep-alive pool requests go through; its owner closes it at shutdown. It should allow at
   * least `concurrency` connections, or requests would queue inside it with their deadline running.
   */
  dispatcher: Dispatcher;
  /** Calls in flight at once; more wait their turn, with their deadline not yet started. */
  concurrency?: number;
  /** Calls allowed to wait; beyond, a call fails at once with `BusyError`. */
  maxQueue?: number;
  userAgent: string;
  /** One deadline per call, covering connect, headers, body and retries. */
  timeoutMs: number;
  retry?: RetryPolicy;
  retryEnvironment?: Partial<RetryEnvironment>;
  maxBodyBytes?: number;
  logger?: { warn(fields: object, message: string): void };
  /**
   * Background work (watches, the feed) gets a lane of its own: its own connections, a few calls
   * at once, and its budget of calls per second, so a person never queues behind it. `pace`
   * keeps the budget: it resolves when the next background call may start (every attempt takes
   * its turn from it), e.g. a `Pacer`'s `take`.
   */
  background?: { dispatcher: Dispatcher; pace: () => Promise<void>; concurrency?: number };
  /** Told of every call once it ends (metrics, the App Home's service health). */
  onCall?: (report: CallReport) => void;
  /**
   * The breaker of the service's origin, shared by every client (every API key) of that origin;
   * by default one of the client's own.
   */
  breaker?: CircuitBreaker;
}

/** Who is waiting for a call: a person (the default), or the bot's own background work. */
export interface CallOptions {
  background?: boolean;
}

export interface PaymentsClient {
  /** The merchant's balance per cryptocurrency, summed over all projects. */
  getBalance(options?: CallOptions): Promise<readonly BalanceEntry[]>;
  /** One invoice; rejects with `InvoiceNotFoundError` when the service has no such id. */
  getInvoice(id: InvoiceId, options?: CallOptions): Promise<Invoice>;
}

/** Where a call runs: its queue, its connections, and for background work its budget. */
interface Lane {
  background: boolean;
  limiter: Limiter;
  dispatcher: Dispatcher;
  pace?: () => Promise<void>;
}

/** Attempts made by one call, counted as they happen. */
interface Attempts {
  count: number;
}

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: string;
}

class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError';
}

export function createPaymentsClient(options: PaymentsClientOptions): PaymentsClient {
  const { timeoutMs } = options;
  const retry = options.retry ?? DEFAULT_RETRY;
  const world: RetryEnvironment = { ...REAL_WORLD, ...options.retryEnvironment };
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const redact = createRedactor([options.apiKey]);
  const interactive: Lane = {
    background: false,
    limiter: new Limiter(options.concurrency ?? DEFAULT_CONCURRENCY, options.maxQueue ?? DEFAULT_MAX_QUEUE),
    dispatcher: options.dispatcher,
  };
  const background: Lane = options.background
    ? {
        background: true,
        limiter: new Limiter(options.background.concurrency ?? 4, DEFAULT_MAX_QUEUE),
        dispatcher: options.background.dispatcher,
        pace: options.background.pace,
      }
    : interactive;
  const breaker = options.breaker ?? new CircuitBreaker();
  /** The deadlines of calls under way, to let them go when the breaker opens. */
  const underWay = new Set<AbortController>();
  // An outage answers everyone at once: calls still waiting for a turn are let go with it, and so
  // are calls already waiting on the service that is not answering (each would wait out its deadline).
  breaker.onChange((state) => {
    if (state !== 'open') return;
    interactive.limiter.releaseWaiting(new CircuitOpenError());
    background.limiter.releaseWaiting(new CircuitOpenError());
    for (const controller of underWay) controller.abort(new CircuitOpenError());
  });
  const base = options.baseUrl.replace(/\/+$/, '');
  const headers = {
    authorization: `Token ${options.apiKey}`,
    accept: 'application/json',
    'user-agent': options.userAgent,
  };
  const interactiveFlights = new SingleFlight();
  const backgroundFlights = new SingleFlight();
  /**
   * Identical calls in flight share one execution. Background work joins any call already in
   * flight, a person's or its own; a person joins only another person's, never a background call
   * that may still be waiting for its budget.
   */
  const flight = <T>(key: string, call: CallOptions, work: (lane: Lane) => Promise<T>): Promise<T> =>
    call.background
      ? (interactiveFlights.join<T>(key) ?? backgroundFlights.run(key, () => work(background)))
      : interactiveFlights.run(key, () => work(interactive));

  /** Runs one call and tells `onCall` how it ended. */
  async function observed<T>(
    lane: Lane,
    operation: Operation,
    work: (tried: Attempts) => Promise<T>,
  ): Promise<T> {
    const started = world.now();
    const tried: Attempts = { count: 0 };
    const report = (result: CallResult) =>
      options.onCall?.({
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

  async function fetchOnce(lane: Lane, path: string, signal: AbortSignal): Promise<Answer> {
    const response = await request(`${base}${path}`, {
      method: 'GET',
      headers,
      signal,
      dispatcher: lane.dispatcher,
    });
    const retryAfter = response.headers['retry-after'];
    return {
      status: response.statusCode,
      retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
      body: await readText(response.body, maxBodyBytes),
    };
  }

  /**
   * GET with the deadline and the retry policy; resolves with a 2xx answer, its body already
   * redacted, or rejects with a PaymentError. The deadline starts when the call gets its turn.
   */
  async function get(lane: Lane, path: string, operation: Operation, tried: Attempts): Promise<Answer> {
    const { limiter } = lane;
    if (breaker.state() === 'open') throw new CircuitOpenError();
    try {
      return await limiter.run(async () => {
        const admission = breaker.admit();
        if (admission === undefined) throw new CircuitOpenError();
        // Not AbortSignal.timeout(): its timer cannot be cleared, so every call would leave one
        // running (and a DOMException to build) for the whole deadline after it has finished.
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(), timeoutMs).unref();
        underWay.add(controller);
        try {
          const answer = await attempts(lane, path, operation, controller.signal, tried);
          breaker.record(admission, 'answered');
          // docs/payment-api.md#secrets: the key never reaches a view or a log through an answer.
          return { ...answer, body: redact(answer.body) };
        } catch (error) {
          // A call the opening breaker let go tells it nothing more.
          if (!(error instanceof CircuitOpenError)) breaker.record(admission, breakerOutcome(error));
          throw error;
        } finally {
          clearTimeout(timer);
          underWay.delete(controller);
        }
      });
    } catch (error) {
      throw error instanceof QueueFullError ? new BusyError(limiter.queued) : error;
    }
  }

  async function attempts(
    lane: Lane,
    path: string,
    operation: Operation,
    deadline: AbortSignal,
    tried: Attempts,
  ): Promise<Answer> {
    const startedAt = world.now();
    for (let attempt = 0; ; attempt += 1) {
      tried.count = attempt + 1;
      let failure: PaymentError;
      // Its turn in the budget. A pace kept in the store fails as the store does: no call is made.
      await lane.pace?.();
      try {
        const answer = await fetchOnce(lane, path, deadline);
        if (answer.status >= 200 && answer.status < 300) return answer;
        failure = errorFromAnswer({ ...answer, redact });
      } catch (error) {
        if (deadline.aborted) throw ended(deadline, error);
        if (error instanceof BodyTooLargeError) {
          throw new UnexpectedResponseError({ detail: error.message, cause: error });
        }
        failure = new ServiceUnavailableError(redact(describeNetworkError(error)), { cause: error });
      }
      const remainingMs = timeoutMs - (world.now() - startedAt);
      const delayMs = retryDelay(failure, attempt, retry, world.random);
      if (delayMs === undefined || delayMs >= remainingMs) throw failure;
      options.logger?.warn(
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
        throw ended(deadline, error);
      }
    }
  }

  /** Why a call's deadline signal ended it: the breaker opened, or the deadline passed. */
  function ended(deadline: AbortSignal, cause: unknown): PaymentError {
    return deadline.reason instanceof CircuitOpenError
      ? deadline.reason
      : new PaymentTimeoutError(timeoutMs, { cause });
  }

  /** The body as JSON, numbers kept exact; the body is already redacted. */
  function parse(answer: Answer): unknown {
    try {
      return parseJson(answer.body);
    } catch (error) {
      throw unexpected(answer, 'the body is not JSON', [], error);
    }
  }

  function validate<S extends z.ZodType>(schema: S, json: unknown, answer: Answer): z.output<S> {
    const parsed = schema.safeParse(json);
    if (parsed.success) return parsed.data;
    const issues = parsed.error.issues
      .slice(0, 10)
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw unexpected(answer, 'the body does not match the API document', issues);
  }

  return {
    getBalance(call = {}) {
      return flight('balance', call, (lane) =>
        observed(lane, 'balance', async (tried) => {
          const answer = await get(lane, '/api/v2/balance', 'balance', tried);
          const json = parse(answer);
          // docs/payment-api.md#success: only "success" is a balance; an error in a 200 is not.
          const { status, message } = validate(envelopeSchema, json, answer);
          if (status !== 'success') {
            const said = message ? `: ${cut(message, SNIPPET_LENGTH)}` : '';
            throw unexpected(
              answer,
              `the status is ${JSON.stringify(status ?? null)}, not "success"${said}`,
              [],
            );
          }
          return validate(balanceResponseSchema, json, answer).result;
        }),
      );
    },

    getInvoice(id, call = {}) {
      // The type says it is an id; this guard keeps a caller's cast from reaching a URL path.
      if (parseInvoiceId(id) !== id) return Promise.reject(new TypeError('getInvoice: not an invoice id'));
      return flight(`invoice/${id}`, call, (lane) =>
        observed(lane, 'invoice', async (tried) => {
          try {
            const answer = await get(lane, `/api/v2/invoice/${id}`, 'invoice', tried);
            return validate(invoiceSchema, parse(answer), answer);
          } catch (error) {
            throw isNotFound(error) ? new InvoiceNotFoundError(id, { status: 400, cause: error }) : error;
          }
        }),
      );
    },
  };
}

function unexpected(
  answer: Answer,
  detail: string,
  issues: string[],
  cause?: unknown,
): UnexpectedResponseError {
  return new UnexpectedResponseError({
    detail,
    issues,
    bodySnippet: cut(answer.body, SNIPPET_LENGTH),
    status: answer.status,
    cause,
  });
}

/** Only the `status` and `message` of the balance answer, whatever else it holds. */
const envelopeSchema = z.object({
  status: z.string().optional().catch(undefined),
  message: z.string().optional().catch(undefined),
});

/** docs/payment-api.md#not-found: exactly a 400 `BadRequestError` means "no such invoice". */
const isNotFound = (error: unknown) =>
  error instanceof ServiceError && error.status === 400 && error.serviceName === 'BadRequestError';

/** Timeouts, refused or reset connections and 5xx: the service is not answering. Anything else is an answer. */
const breakerOutcome = (error: unknown): BreakerOutcome =>
  error instanceof PaymentTimeoutError || error instanceof ServiceUnavailableError
    ? 'not_answered'
    : 'answered';

/** Connection errors, 429 and 502/503/504 are retried; never 400, 401 or a broken body. */
function retryDelay(
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

async function readText(body: AsyncIterable<Buffer> & { destroy(): void }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      throw new BodyTooLargeError(`the body is larger than ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describeNetworkError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? code : error.message;
  }
  return 'network error';
}
