import type { IncomingMessage, ServerResponse } from 'node:http';

/** A request body read up to a limit: whole, over the limit (reading stopped there), or never finished. */
type BodyRead = { kind: 'read'; body: Buffer } | { kind: 'too_large' } | { kind: 'cut_off' };

/**
 * The length a request declares (`Content-Length`), or undefined for a chunked body. Node's
 * parser has already refused a malformed or doubled one (400), so what is left is digits.
 */
export function declaredLength(req: IncomingMessage): number | undefined {
  const value = req.headers['content-length'];
  return value === undefined ? undefined : Number(value);
}

/**
 * Reads a body until its end or until it grows past `limit` bytes; then it stops listening, so
 * nothing more is kept, and the caller answers. It never destroys the request itself (that would
 * close the connection before the answer could be sent). `cut_off`: the client went away, or the
 * server's request timeout closed the connection, before the end.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<BodyRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (result: BodyRead) => {
      req.off('data', onData).off('end', onEnd).off('close', onClose);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.pause();
        done({ kind: 'too_large' });
      } else chunks.push(chunk);
    };
    const onEnd = () => done({ kind: 'read', body: Buffer.concat(chunks, size) });
    const onClose = () => done({ kind: 'cut_off' });
    // An aborted request emits 'error' then 'close'; the listener stays, so a late abort (after
    // the answer) is not an uncaught error.
    req.on('error', () => undefined);
    req.on('data', onData).on('end', onEnd).on('close', onClose);
  });
}

/**
 * Answers `status` with no body and closes the connection once the answer is out, whatever is
 * left of the request unread: Node then reads nothing more of it into memory, and the client
 * cannot send another request on that connection.
 */
export function answerAndClose(res: ServerResponse, status: number): void {
  res.writeHead(status, { connection: 'close', 'content-length': '0' }).end();
}
