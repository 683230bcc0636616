import { finished, type Readable } from 'node:stream';

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

/**
 * The body as UTF-8 text, or `BodyTooLargeError` (the rest left unread) past `limit` bytes. Read
 * with listeners, not `for await`: an async iterator costs a promise and a turn of the microtask
 * queue per chunk, and this runs once per call to the service. A body that fails or ends early
 * rejects with the stream's own error, as `for await` would (`finished` gives the same ones).
 */
export function readText(body: Readable, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      body.off('data', onData);
      body.destroy();
      reject(new BodyTooLargeError(`the body is larger than ${limit} bytes`));
    };
    body.on('data', onData);
    finished(body, (error) => {
      if (error) reject(error);
      else resolve(Buffer.concat(chunks, size).toString('utf8'));
    });
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
