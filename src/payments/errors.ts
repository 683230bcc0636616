/**
 * Every way a call to the payment service can fail, as classes with a stable `code` that callers
 * switch on. Messages are for logs; what a person reads is written by the views from the code.
 * No message or field holds the API key: the client redacts anything it copies from outside.
 */

export type PaymentErrorCode =
  | 'invalid_api_key'
  | 'invoice_not_found'
  | 'rate_limited'
  | 'service_unavailable'
  | 'timeout'
  | 'unexpected_response'
  | 'service_error'
  | 'busy'
  | 'service_down';

interface ErrorInit {
  /** The HTTP status of the service's answer, when there was an answer. */
  status?: number | undefined;
  cause?: unknown;
}

export abstract class PaymentError extends Error {
  abstract readonly code: PaymentErrorCode;
  readonly status: number | undefined;

  constructor(message: string, init: ErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
  }
}

/** 401: the key matches no project (`UnauthorizedError`, "shop not found"). */
export class InvalidApiKeyError extends PaymentError {
  override readonly name = 'InvalidApiKeyError';
  readonly code = 'invalid_api_key';
  constructor(init: ErrorInit) {
    super('the payment service rejected the API key', init);
  }
}

/** 400 `BadRequestError` on an invoice: no invoice has this id (docs/payment-api.md#not-found). */
export class InvoiceNotFoundError extends PaymentError {
  override readonly name = 'InvoiceNotFoundError';
  readonly code = 'invoice_not_found';
  constructor(
    readonly invoiceId: string,
    init: ErrorInit,
  ) {
    super(`no invoice ${invoiceId}`, init);
  }
}

/** 429, after the retries that fitted the deadline. */
export class RateLimitedError extends PaymentError {
  override readonly name = 'RateLimitedError';
  readonly code = 'rate_limited';
  constructor(
    /** From `Retry-After`, when the service sent one. */
    readonly retryAfterMs: number | undefined,
    init: ErrorInit,
  ) {
    super(
      `rate limited by the payment service${retryAfterMs === undefined ? '' : `, retry after ${retryAfterMs} ms`}`,
      init,
    );
  }
}

/** 5xx, or the connection was refused or reset. */
export class ServiceUnavailableError extends PaymentError {
  override readonly name = 'ServiceUnavailableError';
  readonly code = 'service_unavailable';
  constructor(detail: string, init: ErrorInit) {
    super(`payment service unavailable: ${detail}`, init);
  }
}

/** The call's deadline passed (connect, headers, body and retries together). */
export class PaymentTimeoutError extends PaymentError {
  override readonly name = 'PaymentTimeoutError';
  readonly code = 'timeout';
  constructor(
    readonly timeoutMs: number,
    init: ErrorInit,
  ) {
    super(`the payment service did not answer within ${timeoutMs} ms`, init);
  }
}

interface UnexpectedResponseInit extends ErrorInit {
  /** What was wrong, for the log: "the body is not JSON". */
  detail: string;
  /** Where the body broke the schema, e.g. `result.0.balance: not a decimal number`. */
  issues?: readonly string[];
  /** The start of the body, redacted; never the whole of it. */
  bodySnippet?: string;
}

/** A success status with a body that is not JSON or does not match the document. */
export class UnexpectedResponseError extends PaymentError {
  override readonly name = 'UnexpectedResponseError';
  readonly code = 'unexpected_response';
  readonly issues: readonly string[];
  readonly bodySnippet: string;
  constructor({ detail, issues = [], bodySnippet = '', ...init }: UnexpectedResponseInit) {
    super(`unexpected answer from the payment service: ${detail}`, init);
    this.issues = issues;
    this.bodySnippet = bodySnippet;
  }
}

/** Any other status: what the service said, with its `name` and `message` when it sent them. */
export class ServiceError extends PaymentError {
  override readonly name = 'ServiceError';
  readonly code = 'service_error';
  constructor(
    readonly serviceName: string | undefined,
    readonly serviceMessage: string | undefined,
    init: ErrorInit & { status: number },
  ) {
    super(
      `payment service answered HTTP ${init.status}${serviceName ? ` ${serviceName}` : ''}${serviceMessage ? `: ${serviceMessage}` : ''}`,
      init,
    );
  }
}

/**
 * Every connection to the service was in use (other calls, other keys' too, were under way): no
 * call was made for this one. Either more calls were already waiting than the bot lets queue, or
 * no connection came free within the wait allowed (`waitedMs`). Not the service's fault: it
 * never counts toward the breaker.
 */
export class BusyError extends PaymentError {
  override readonly name = 'BusyError';
  readonly code = 'busy';
  constructor(
    /** Calls of the same key still waiting. */
    readonly queued: number,
    /** How long this call waited for a connection, when it gave up waiting. */
    readonly waitedMs?: number,
  ) {
    super(
      waitedMs === undefined
        ? `${queued} ${queued === 1 ? 'call to the payment service is' : 'calls to the payment service are'} already waiting`
        : `no connection to the payment service came free within ${waitedMs} ms; no call was made`,
    );
  }
}

/**
 * A background call its key's budget gave no turn in time (src/store/pace.ts): each turn it took
 * came later than the pace allows, or the call's deadline ended first. No call was made; the
 * instance, not the service, was too busy, and the breaker and the App Home's health are told
 * nothing of the service.
 */
export class PacedOutError extends PaymentError {
  override readonly name = 'PacedOutError';
  readonly code = 'busy';
  constructor() {
    super('the key’s background budget had no turn for this call in time; no call was made');
  }
}

/**
 * The circuit breaker is open: the service stopped answering (a run of timeouts, resets or 5xx),
 * so no call was made for this one; the bot keeps probing and closes it at the first answer.
 */
export class CircuitOpenError extends PaymentError {
  override readonly name = 'CircuitOpenError';
  readonly code = 'service_down';
  constructor() {
    super('the payment service is not answering (circuit open); no call was made');
  }
}

/** Every concrete payment error: a `switch` on `code` narrows to the class and its fields. */
export type AnyPaymentError =
  | InvalidApiKeyError
  | InvoiceNotFoundError
  | RateLimitedError
  | ServiceUnavailableError
  | PaymentTimeoutError
  | UnexpectedResponseError
  | ServiceError
  | BusyError
  | CircuitOpenError;

export function isPaymentError(error: unknown): error is AnyPaymentError {
  return error instanceof PaymentError;
}
