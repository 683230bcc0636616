import { setTimeout as sleepFor } from 'node:timers/promises';
import type { RespondArguments } from '@slack/bolt';
import { parseRetryAfter } from '../payments/answers.js';

/** Why a post to a response_url failed; `transient` failures are worth another try. */
export class ResponseUrlError extends Error {
  override readonly name = 'ResponseUrlError';
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly retryAfterMs: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** 5xx, 429 and no answer at all (a connection error, a time-out); never 4xx: an expired URL stays expired. */
  get transient(): boolean {
    return this.status === undefined || this.status === 429 || this.status >= 500;
  }
}

/** Posts a reply to a `response_url` (docs/slack.md#response-url). */
export interface ResponseUrlClient {
  post(url: string, message: RespondArguments): Promise<void>;
}

interface ResponseUrlOptions {
  /** Attempts in all, the first included. */
  attempts?: number;
  /** Backoff before retry n (0-based): baseDelayMs × 2^n, unless Slack says Retry-After. */
  baseDelayMs?: number;
  /** The longest wait between attempts, Retry-After included. */
  maxDelayMs?: number;
  /** Deadline of one attempt. */
  timeoutMs?: number;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  /**
   * Told how each post ended, after its retries: `ok`, `transient` (still a 5xx, a 429 or no
   * answer) or `refused` (a 4xx: an expired or unknown URL).
   */
  onPost?: (result: 'ok' | 'transient' | 'refused') => void;
}

/**
 * A response_url client that retries what is worth retrying: a few attempts over some seconds,
 * well inside the 30 minutes a response_url lives, so one 500 from Slack loses no reply.
 */
export function createResponseUrlClient(options: ResponseUrlOptions = {}): ResponseUrlClient {
  const attempts = options.attempts ?? 4;
  const baseDelayMs = options.baseDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 10_000;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const doFetch = options.fetch ?? fetch;
  const sleep = options.sleep ?? ((ms: number) => sleepFor(ms));

  async function once(url: string, message: RespondArguments): Promise<void> {
    let response: Response;
    try {
      response = await doFetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(message),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new ResponseUrlError('no answer from the response_url', undefined, undefined, { cause: error });
    }
    await response.body?.cancel();
    if (!response.ok) {
      const retryAfter = parseRetryAfter(response.headers.get('retry-after') ?? undefined);
      throw new ResponseUrlError(
        `the response_url answered HTTP ${response.status}`,
        response.status,
        retryAfter,
      );
    }
  }

  async function withRetries(url: string, message: RespondArguments): Promise<void> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await once(url, message);
      } catch (error) {
        if (!(error instanceof ResponseUrlError) || !error.transient || attempt + 1 >= attempts) throw error;
        await sleep(Math.min(maxDelayMs, error.retryAfterMs ?? baseDelayMs * 2 ** attempt));
      }
    }
  }

  return {
    async post(url, message) {
      try {
        await withRetries(url, message);
        options.onPost?.('ok');
      } catch (error) {
        options.onPost?.(error instanceof ResponseUrlError && !error.transient ? 'refused' : 'transient');
        throw error;
      }
    },
  };
}
