import { parse as parseJson } from 'lossless-json';
import { errorBodySchema } from './schemas.js';

/**
 * Every way a call to the payment service can fail, as classes with a stable `code` that callers
 * switch on. Messages are for logs; what a person reads is written by the views from the code.
 * No message or field holds the API key: the client redacts anything it copies from outside.
 */

export type PaymentErrorCode =
  | 'invalid_invoice_id'
  | 'invalid_api_key'
  | 'invoice_not_found'
  | 'rate_limited'
  | 'service_unavailable'
  | 'timeout'
  | 'unexpected_response'
  | 'service_error';

export type Operation = 'balance' | 'invoice';

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

/** What the user typed is not an invoice id; no request was made. */
export class InvalidInvoiceIdError extends PaymentError {
  override readonly name = 'InvalidInvoiceIdError';
  readonly code = 'invalid_invoice_id';
  /** What was typed, cut to 500 characters: enough to quote back, not a pasted novel in the logs. */
  readonly input: string;
  constructor(input: string) {
    super('not an invoice id (expected 8-4-4-4-12 hexadecimal)');
    this.input = input.slice(0, 500);
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

/** 400 `BadRequestError` on an invoice: no invoice has this id. */
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

/** A success status with a body that is not JSON or does not match the document. */
export class UnexpectedResponseError extends PaymentError {
  override readonly name = 'UnexpectedResponseError';
  readonly code = 'unexpected_response';
  constructor(
    detail: string,
    /** Where the body broke the schema, e.g. `result.0.balance: not a decimal number`. */
    readonly issues: readonly string[],
    /** The start of the body, redacted; never the whole of it. */
    readonly bodySnippet: string,
    init: ErrorInit,
  ) {
    super(`unexpected answer from the payment service: ${detail}`, init);
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

/** Every concrete payment error: a `switch` on `code` narrows to the class and its fields. */
export type AnyPaymentError =
  | InvalidInvoiceIdError
  | InvalidApiKeyError
  | InvoiceNotFoundError
  | RateLimitedError
  | ServiceUnavailableError
  | PaymentTimeoutError
  | UnexpectedResponseError
  | ServiceError;

export function isPaymentError(error: unknown): error is AnyPaymentError {
  return error instanceof PaymentError;
}

/** An HTTP answer that was not a success, as the client received it. */
export interface FailedAnswer {
  operation: Operation;
  /** The id asked for, on invoice calls. */
  invoiceId?: string | undefined;
  status: number;
  retryAfter?: string | undefined;
  body: string;
  /** Removes secrets from any text copied out of the answer. */
  redact: (text: string) => string;
}

/** Longest service `name`/`message` kept in an error. */
const MAX_SERVICE_TEXT = 200;

/**
 * The one place an unsuccessful answer becomes an error (§7 of the API document):
 * 401 → invalid key; 400 `BadRequestError` on an invoice → not found; 429 → rate limited;
 * 5xx → unavailable; anything else → a generic service error carrying the service's own words.
 */
export function errorFromAnswer(answer: FailedAnswer): PaymentError {
  const { status } = answer;
  const fields = readErrorBody(answer.body);
  if (status === 401) return new InvalidApiKeyError({ status });
  if (
    status === 400 &&
    answer.operation === 'invoice' &&
    answer.invoiceId &&
    fields.name === 'BadRequestError'
  ) {
    return new InvoiceNotFoundError(answer.invoiceId, { status });
  }
  if (status === 429) return new RateLimitedError(parseRetryAfter(answer.retryAfter), { status });
  if (status >= 500) return new ServiceUnavailableError(`HTTP ${status}`, { status });
  const clean = (text: string | undefined) => text && answer.redact(text).slice(0, MAX_SERVICE_TEXT);
  return new ServiceError(clean(fields.name), clean(fields.message), { status });
}

function readErrorBody(body: string): { name?: string | undefined; message?: string | undefined } {
  try {
    const parsed = errorBodySchema.safeParse(parseJson(body));
    return parsed.success ? parsed.data : {};
  } catch {
    return {}; // not JSON: an HTML error page from a proxy, say
  }
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // An HTTP-date always names its day and month; Date.parse alone would take "-5" as a year.
  const date = /[A-Za-z]/.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
