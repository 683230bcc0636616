import { connect, type Socket } from 'node:net';

/**
 * An HTTP/1.1 client on a bare socket, for what fetch cannot do: announce a body and send only
 * part of it (or none), stall in the middle of the headers, hold a connection open doing nothing.
 */

export interface RawAnswer {
  /** The status of the first answer on the connection; undefined if it closed without one. */
  status: number | undefined;
  /** Everything received, headers included. */
  text: string;
  /** Milliseconds from the start to the first byte received, if any. */
  firstByteMs: number | undefined;
  /** Milliseconds from the start to the connection's close. */
  closedMs: number;
}

export interface RawClient {
  readonly socket: Socket;
  /** Resolves once the connection has closed, whoever closed it. */
  readonly closed: Promise<RawAnswer>;
  /** Resolves with the first answer's status as soon as it arrives, or when the connection closes without one. */
  readonly answered: Promise<RawAnswer>;
}

/** `METHOD path HTTP/1.1` and the headers, ending with the blank line. */
export function head(method: string, path: string, headers: Record<string, string>): string {
  const lines = Object.entries({ host: '127.0.0.1', ...headers }).map(([k, v]) => `${k}: ${v}\r\n`);
  return `${method} ${path} HTTP/1.1\r\n${lines.join('')}\r\n`;
}

/** Connects to 127.0.0.1:`port` and writes `parts` in order; then leaves the connection as it is. */
export function rawClient(port: number, ...parts: (string | Buffer)[]): RawClient {
  const socket = connect(port, '127.0.0.1');
  const started = performance.now();
  const chunks: Buffer[] = [];
  let firstByteMs: number | undefined;
  const answer = (): RawAnswer => {
    const text = Buffer.concat(chunks).toString('latin1');
    const status = /^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1];
    return {
      status: status === undefined ? undefined : Number(status),
      text,
      firstByteMs,
      closedMs: performance.now() - started,
    };
  };
  let onAnswer: (a: RawAnswer) => void = () => undefined;
  const answered = new Promise<RawAnswer>((resolve) => {
    onAnswer = resolve;
  });
  const closed = new Promise<RawAnswer>((resolve) => {
    socket.on('close', () => {
      const a = answer();
      onAnswer(a);
      resolve(a);
    });
  });
  socket.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    firstByteMs ??= performance.now() - started;
    if (/\r\n\r\n/.test(Buffer.concat(chunks).toString('latin1'))) onAnswer(answer());
  });
  // Writes after the server closed the connection fail: that is what some tests look for.
  socket.on('error', () => undefined);
  for (const part of parts) socket.write(part);
  return { socket, closed, answered };
}

export interface HeldConnections {
  /** How many of them the server closed without an answer (each was opened again at once). */
  readonly closedUnanswered: () => number;
  /** Opens no more, lets closures under way arrive (100 ms), then closes the rest. */
  stop(): Promise<void>;
}

/**
 * What an attacker does to take the connections: `count` connections to `port`, each sending
 * `parts` (none: an idle one) and then nothing; one the server closes is opened again at once.
 * Resolves once each of the first `count` has connected or been closed.
 */
export async function holdConnections(
  port: number,
  count: number,
  ...parts: (string | Buffer)[]
): Promise<HeldConnections> {
  const open = new Set<RawClient>();
  let stopped = false;
  let closedUnanswered = 0;
  let closing = false;
  const hold = (): RawClient => {
    const c = rawClient(port, ...parts);
    open.add(c);
    void c.closed.then((answer) => {
      open.delete(c);
      if (answer.status === undefined && !closing) closedUnanswered += 1;
      if (!stopped) hold();
    });
    return c;
  };
  const first = Array.from({ length: count }, hold);
  // Connected, or already closed by the server (then reopened).
  await Promise.all(
    first.map((c) => Promise.race([new Promise((ok) => c.socket.once('connect', ok)), c.closed])),
  );
  return {
    closedUnanswered: () => closedUnanswered,
    async stop() {
      stopped = true;
      await new Promise((resolve) => setTimeout(resolve, 100));
      closing = true;
      for (const c of open) c.socket.destroy();
    },
  };
}
