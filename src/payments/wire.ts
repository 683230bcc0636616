import type { Dispatcher } from 'undici';

/** What one attempt read off the wire: the status, `Retry-After`, and the body as text. */
export interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: string;
}

/** The body was larger than the client reads. */
export class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError';
}

/** One GET: where it goes, with which headers, until when, and the most of its body read. */
export interface Get {
  /** The service's origin (`https://host:port`). */
  origin: string;
  /** The path and query, from the origin. */
  path: string;
  headers: Record<string, string>;
  /** Ends the request, failing it with the signal's reason. */
  signal: AbortSignal;
  /** The body's bytes read at most: past them, `BodyTooLargeError` and the rest left unread. */
  limit: number;
}

/**
 * One GET through `dispatcher`: its status, `Retry-After` and body as UTF-8 text, read with
 * undici's handler API. Not `request()`: that wraps each answer in a body stream, an async
 * resource and their promises, and this runs once per call to the service. Fails with the
 * connection's error (one reset mid-body included), the signal's reason, or BodyTooLargeError.
 */
export function getText(dispatcher: Dispatcher, get: Get): Promise<Answer> {
  const { signal, limit } = get;
  return new Promise((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    const onAbort = () => controller?.abort(signal.reason);
    signal.addEventListener('abort', onAbort);
    let status = 0;
    let retryAfter: string | undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    const settled = () => signal.removeEventListener('abort', onAbort);
    dispatcher.dispatch(
      { origin: get.origin, path: get.path, method: 'GET', headers: get.headers },
      {
        onRequestStart(started) {
          controller = started;
          // Ended before it was sent (before the call, or while it waited for a connection): not sent.
          if (signal.aborted) started.abort(signal.reason);
        },
        onResponseStart(_, statusCode, headers) {
          status = statusCode;
          const value = headers['retry-after'];
          retryAfter = Array.isArray(value) ? value[0] : value;
        },
        onResponseData(reading, chunk) {
          size += chunk.length;
          if (size <= limit) chunks.push(chunk);
          else reading.abort(new BodyTooLargeError(`the body is larger than ${limit} bytes`));
        },
        onResponseEnd() {
          settled();
          resolve({ status, retryAfter, body: Buffer.concat(chunks, size).toString('utf8') });
        },
        onResponseError(_, error) {
          settled();
          reject(error);
        },
      },
    );
  });
}

/** A network failure in a few words: its code (ECONNRESET) when it has one. */
export function describeNetworkError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? code : error.message;
  }
  return 'network error';
}
