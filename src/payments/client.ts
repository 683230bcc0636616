import { parse as parseJson } from 'lossless-json';
import { type Dispatcher, request } from 'undici';
import { z } from 'zod';
import { createRedactor } from '../redact.js';
import { cut } from '../text.js';
import { errorFromAnswer } from './answers.js';
import { type BreakerOutcome, CircuitBreaker } from './breaker.js';
import {
  CircuitOpenError,
  InvoiceNotFoundError,
  isPaymentError,
  type PaymentError,
  PaymentTimeoutError,
  ServiceError,
  ServiceUnavailableError,
  UnexpectedResponseError,
} from './errors.js';
import { DEFAULT_MAX_QUEUE, FairSlots, type KeySlots } from './fair-slots.js';
import type { CallReport, CallResult } from './health.js';
import { type InvoiceId, parseInvoiceId } from './invoice-id.js';
import { DEFAULT_RETRY, REAL_WORLD, type RetryEnvironment, type RetryPolicy, retryDelay } from './retry.js';
import { type BalanceEntry, balanceResponseSchema, type Invoice, invoiceSchema } from './schemas.js';
import { SingleFlight } from './single-flight.js';
import { type Answer, BodyTooLargeError, describeNetworkError, readText } from './wire.js';

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const SNIPPET_LENGTH = 200;
/** Calls to the service at once, and calls allowed to wait for a turn (docs/payment-api.md#limits). */
export const DEFAULT_CONCURRENCY = 32;
/**
 * How long a call waits for its turn at most. A person has had Slack's acknowledgement long
 * before, and the answer follows through the `response_url`; past this, "try again" is the
 * more useful answer.
 */
export const DEFAULT_MAX_WAIT_MS = 30_000;

export type Operation = 'balance' | 'invoice';

export interface PaymentsClientOptions {
  /** The service's `{base_url}`; paths `/api/v2/...` are appended to it. */
  baseUrl: string;
  apiKey: string;
  /**
   * The keep-alive pool requests go through; its owner closes it at shutdown. It should allow at
   * least as many connections as `slots` has (or `concurrency`), or requests would queue inside it
   * with their deadline running.
   */
  dispatcher: Dispatcher;
  /**
   * The slots of `dispatcher`'s connections, shared fairly by every client (every key) that uses
   * it; by default slots of the client's own, `concurrency` of them.
   */
  slots?: FairSlots;
  /** Calls in flight at once for this key; more wait their turn, with their deadline not yet started. */
  concurrency?: number;
  /** Calls allowed to wait; beyond, a call fails at once with `BusyError`. */
  maxQueue?: number;
  /**
   * How long a call may wait for its turn (a free connection) before it fails with `BusyError`,
   * no call made; 30 s by default. Waiting is not counted in the deadline.
   */
  maxWaitMs?: number;
  userAgent: string;
  /**
   * One deadline per call from its turn on (its connection, and for background work its budget),
   * covering connecting when the connection is new, headers, body and retries.
   */
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
  background?: {
    dispatcher: Dispatcher;
    pace: () => Promise<void>;
    /** Calls of this key's background work in flight at once. */
    concurrency?: number;
    /** The slots of its `dispatcher`'s connections, shared fairly by every key; by default its own. */
    slots?: FairSlots;
  };
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
  /**
   * Lets go of what it shares with every other client (its place among the breaker's listeners):
   * a client made for a key that was replaced, or for an installation no longer kept, is then
   * garbage like the rest of it. Calls already under way finish as they would.
   */
  close?(): void;
}

/** Where a call runs: its turns, its connections, and for background work its budget. */
interface Lane {
  background: boolean;
  turns: KeySlots;
  dispatcher: Dispatcher;
  pace?: () => Promise<void>;
}

/** Attempts made by one call, counted as they happen. */
interface Attempts {
  count: number;
  /** Whether a request went to the service (its deadline still running when it was sent). */
  sent: boolean;
}

export function createPaymentsClient(options: PaymentsClientOptions): PaymentsClient {
  const { timeoutMs } = options;
  const maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
  const retry = options.retry ?? DEFAULT_RETRY;
  const world: RetryEnvironment = { ...REAL_WORLD, ...options.retryEnvironment };
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const redact = createRedactor([options.apiKey]);
  const concurrency = options.concurrency ?? options.slots?.slots ?? DEFAULT_CONCURRENCY;
  const interactive: Lane = {
    background: false,
    turns: (options.slots ?? new FairSlots({ slots: concurrency })).key({
      concurrency,
      maxQueue: options.maxQueue ?? DEFAULT_MAX_QUEUE,
    }),
    dispatcher: options.dispatcher,
  };
  const background: Lane = options.background ? backgroundLane(options.background) : interactive;
  const breaker = options.breaker ?? new CircuitBreaker();
  /** The deadlines of calls under way, to let them go when the breaker opens. */
  const underWay = new Set<AbortController>();
  // An outage answers everyone at once: calls still waiting for a turn are let go with it, and so
  // are calls already waiting on the service that is not answering (each would wait out its deadline).
  const unsubscribe = breaker.onChange((state) => {
    if (state !== 'open') return;
    interactive.turns.releaseWaiting(new CircuitOpenError());
    background.turns.releaseWaiting(new CircuitOpenError());
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
    const tried: Attempts = { count: 0, sent: false };
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
   * redacted, or rejects with a PaymentError. The deadline starts when the call gets its turn,
   * that is its connection; a call that never got one (`BusyError`) tells the breaker nothing.
   */
  async function get(lane: Lane, path: string, operation: Operation, tried: Attempts): Promise<Answer> {
    if (breaker.state() === 'open') throw new CircuitOpenError();
    return lane.turns.run(async () => {
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
        // A call the opening breaker let go tells it nothing more; one never sent, nothing at all.
        if (!(error instanceof CircuitOpenError))
          breaker.record(admission, tried.sent ? breakerOutcome(error) : 'not_sent');
        throw error;
      } finally {
        clearTimeout(timer);
        underWay.delete(controller);
      }
    }, maxWaitMs);
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
        tried.sent ||= !deadline.aborted;
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
    close: unsubscribe,
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

/** The background lane of one key: its own connections, its turns among the keys', its budget. */
function backgroundLane(options: NonNullable<PaymentsClientOptions['background']>): Lane {
  const concurrency = options.concurrency ?? 4;
  return {
    background: true,
    turns: (options.slots ?? new FairSlots({ slots: concurrency })).key({ concurrency }),
    dispatcher: options.dispatcher,
    pace: options.pace,
  };
}
