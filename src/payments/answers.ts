import { parse as parseJson } from 'lossless-json';
import { cut } from '../text.js';
import {
  InvalidApiKeyError,
  type PaymentError,
  RateLimitedError,
  ServiceError,
  ServiceUnavailableError,
} from './errors.js';
import { errorBodySchema } from './schemas.js';

/** An HTTP answer that was not a success, as the client received it. */
interface FailedAnswer {
  status: number;
  retryAfter?: string | undefined;
  body: string;
  /** Removes secrets from any text copied out of the answer. */
  redact: (text: string) => string;
}

/** Longest service `name`/`message` kept in an error. */
const MAX_SERVICE_TEXT = 200;

/**
 * The one place an unsuccessful answer becomes an error (docs/payment-api.md#errors), for any
 * call: 401 → invalid key; 429 → rate limited; 5xx → unavailable; anything else → a service
 * error carrying the service's own words (the invoice call narrows its 400 to "not found").
 */
export function errorFromAnswer(answer: FailedAnswer): PaymentError {
  const { status } = answer;
  if (status === 401) return new InvalidApiKeyError({ status });
  if (status === 429) return new RateLimitedError(parseRetryAfter(answer.retryAfter), { status });
  if (status >= 500) return new ServiceUnavailableError(`HTTP ${status}`, { status });
  const fields = readErrorBody(answer.body);
  const clean = (text: string | undefined) => text && cut(answer.redact(text), MAX_SERVICE_TEXT);
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

/**
 * The longest wait a `Retry-After` can ask for: beyond it the header is taken as meaning "much
 * later", not as a year to wait or to tell a person about.
 */
const MAX_RETRY_AFTER_MS = 6 * 60 * 60 * 1000;

/** `Retry-After` as milliseconds, at most six hours: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  // An HTTP-date always names its day and month; Date.parse alone would take "-5" as a year.
  const ms = /^\d+$/.test(trimmed)
    ? Number(trimmed) * 1000
    : /[A-Za-z]/.test(trimmed)
      ? Date.parse(trimmed) - now
      : Number.NaN;
  return Number.isNaN(ms) ? undefined : Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms));
}
