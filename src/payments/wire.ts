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

/** The body as UTF-8 text, or `BodyTooLargeError` (the rest left unread) past `limit` bytes. */
export async function readText(
  body: AsyncIterable<Buffer> & { destroy(): void },
  limit: number,
): Promise<string> {
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

/** A network failure in a few words: its code (ECONNRESET) when it has one. */
export function describeNetworkError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? code : error.message;
  }
  return 'network error';
}
