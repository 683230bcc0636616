import { parse as parseJson } from 'lossless-json';
import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { createRedactor } from '../redact.js';
import { cut } from '../text.js';
import { CircuitBreaker } from './breaker.js';
import { type Caller, get, type Lane, observed } from './call.js';
import { CircuitOpenError, InvoiceNotFoundError, ServiceError, UnexpectedResponseError } from './errors.js';
import { DEFAULT_MAX_QUEUE, FairSlots } from './fair-slots.js';
import type { CallReport } from './health.js';
import { type InvoiceId, parseInvoiceId } from './invoice-id.js';
import { DEFAULT_RETRY, REAL_WORLD, type RetryEnvironment, type RetryPolicy } from './retry.js';
import { type BalanceEntry, balanceResponseSchema, type Invoice, invoiceSchema } from './schemas.js';
import { SingleFlight } from './single-flight.js';
import type { Answer } from './wire.js';

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const SNIPPET_LENGTH = 200;
/** Calls to the service at once, and calls allowed to wait for a turn (docs/payment-api.md#limits). */
const DEFAULT_CONCURRENCY = 32;
/**
 * How long a call waits for its turn at most. A person has had Slack's acknowledgement long
 * before, and the answer follows through the `response_url`; past this, "try again" is the
 * more useful answer.
 */
const DEFAULT_MAX_WAIT_MS = 30_000;

interface PaymentsClientOptions {
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
   * keeps the budget: it resolves true when the next background call may start (every attempt
   * takes its turn from it), false when the call had no turn within its deadline and is not
   * made (`PacedOutError`); e.g. a `Pacer`'s `take`.
   */
  background?: {
    dispatcher: Dispatcher;
    pace: (deadline: AbortSignal) => Promise<boolean>;
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

export function createPaymentsClient(options: PaymentsClientOptions): PaymentsClient {
  const interactive = interactiveLane(options);
  const background: Lane = options.background ? backgroundLane(options.background) : interactive;
  return new KeyClient(callerOf(options), interactive, background);
}

/**
 * One key's client: what must stay per key (its lanes' turns, its calls in flight for
 * single-flight, its place among the breaker's listeners) as a few fields, its calls on the
 * prototype, so that thousands of keys kept at once weigh little each.
 */
class KeyClient implements PaymentsClient {
  readonly #caller: Caller;
  readonly #interactive: Lane;
  readonly #background: Lane;
  readonly #interactiveFlights = new SingleFlight();
  readonly #backgroundFlights = new SingleFlight();
  readonly #unsubscribe: () => void;

  constructor(caller: Caller, interactive: Lane, background: Lane) {
    this.#caller = caller;
    this.#interactive = interactive;
    this.#background = background;
    // An outage answers everyone at once: calls still waiting for a turn are let go with it, and so
    // are calls already waiting on the service that is not answering (each would wait out its deadline).
    this.#unsubscribe = caller.breaker.onChange((state) => {
      if (state !== 'open') return;
      interactive.turns.releaseWaiting(new CircuitOpenError());
      background.turns.releaseWaiting(new CircuitOpenError());
      for (const controller of caller.underWay) controller.abort(new CircuitOpenError());
    });
  }

  close(): void {
    this.#unsubscribe();
  }

  /**
   * Identical calls in flight share one execution. Background work joins any call already in
   * flight, a person's or its own; a person joins only another person's, never a background call
   * that may still be waiting for its budget.
   */
  #flight<T>(key: string, call: CallOptions, work: (lane: Lane) => Promise<T>): Promise<T> {
    return call.background
      ? (this.#interactiveFlights.join<T>(key) ??
          this.#backgroundFlights.run(key, () => work(this.#background)))
      : this.#interactiveFlights.run(key, () => work(this.#interactive));
  }

  getBalance(call: CallOptions = {}): Promise<readonly BalanceEntry[]> {
    const path = '/api/v2/balance';
    const caller = this.#caller;
    return this.#flight(path, call, (lane) =>
      observed(caller, lane, 'balance', async (tried) => {
        const answer = await get(caller, lane, path, 'balance', tried);
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
  }

  getInvoice(id: InvoiceId, call: CallOptions = {}): Promise<Invoice> {
    // The type says it is an id; this guard keeps a caller's cast from reaching a URL path.
    if (parseInvoiceId(id) !== id) return Promise.reject(new TypeError('getInvoice: not an invoice id'));
    const path = `/api/v2/invoice/${id}`;
    const caller = this.#caller;
    return this.#flight(path, call, (lane) =>
      observed(caller, lane, 'invoice', async (tried) => {
        try {
          const answer = await get(caller, lane, path, 'invoice', tried);
          return validate(invoiceSchema, parse(answer), answer);
        } catch (error) {
          throw isNotFound(error) ? new InvoiceNotFoundError(id, { status: 400, cause: error }) : error;
        }
      }),
    );
  }
}

/** What every call of the client shares, from its options: the service, the key, the limits, the breaker. */
function callerOf(options: PaymentsClientOptions): Caller {
  const base = new URL(options.baseUrl);
  return {
    origin: base.origin,
    prefix: base.pathname.replace(/\/+$/, ''),
    headers: {
      authorization: `Token ${options.apiKey}`,
      accept: 'application/json',
      'user-agent': options.userAgent,
    },
    timeoutMs: options.timeoutMs,
    maxWaitMs: options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    retry: options.retry ?? DEFAULT_RETRY,
    // The real world is one object every client shares; a test's is merged over it.
    world: options.retryEnvironment ? { ...REAL_WORLD, ...options.retryEnvironment } : REAL_WORLD,
    redact: createRedactor([options.apiKey]),
    breaker: options.breaker ?? new CircuitBreaker(),
    underWay: new Set<AbortController>(),
    logger: options.logger,
    onCall: options.onCall,
  };
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
  const issues = parsed.error.issues.slice(0, 10).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  throw unexpected(answer, 'the body does not match the API document', issues);
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

/** The interactive lane of one key: a person's calls, on its turns among the keys'. */
function interactiveLane(options: PaymentsClientOptions): Lane {
  const concurrency = options.concurrency ?? options.slots?.slots ?? DEFAULT_CONCURRENCY;
  return {
    background: false,
    turns: (options.slots ?? new FairSlots({ slots: concurrency })).key({
      concurrency,
      maxQueue: options.maxQueue ?? DEFAULT_MAX_QUEUE,
    }),
    dispatcher: options.dispatcher,
  };
}

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
