import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../logger.js';

/**
 * How many connections the server keeps open at most, and which one gives way when one more
 * arrives (docs/slack.md#request-limits). Not `server.maxConnections`: that closes the newcomer,
 * so whoever holds the connections (idle ones cost nothing to hold) locks everybody else out.
 * Here the newcomer always gets a turn: the connection closed to make room is, oldest first,
 * one that has sent nothing for `silentGraceMs`; else one in the middle of sending a request
 * (headers or body not all there); else one idle between two requests; else one that has just
 * connected and not sent yet. A real client sends its request as soon as it connects, so it
 * spends no time in the first class and the least in the others, while connections that give way
 * and connect again line up behind it. A connection whose request has arrived whole and is being
 * answered is never closed for room; only when every open connection is such one is the
 * newcomer refused, and each of those ends within the server's time limits.
 */
export interface ConnectionLimits {
  /** Open connections at most, all routes together. */
  readonly max: number;
  /** A connection that has sent nothing this long is the first to give way. */
  readonly silentGraceMs: number;
  /** Closures are logged once per window, at its end, with their counts. */
  readonly logWindowMs: number;
}

interface Tracked {
  /** When it connected (performance.now()). */
  readonly since: number;
  /** The request being received or answered on this connection, if any. */
  request: IncomingMessage | undefined;
  /** An answer has ended on it: a kept-alive connection. */
  answered: boolean;
}

/** Which connections give way first (lowest), or undefined for one being answered. */
function rank(socket: Socket, t: Tracked, now: number, silentGraceMs: number): number | undefined {
  if (t.request?.complete) return undefined;
  if (t.request) return 1;
  if (t.answered) return 2;
  if (socket.bytesRead > 0) return 1;
  return now - t.since >= silentGraceMs ? 0 : 3;
}

export interface ConnectionGuard {
  /** Stops the pending log window, logging what it counted. */
  stop(): void;
}

/** Tracks `server`'s connections and keeps them within `limits.max` (see ConnectionLimits). */
export function guardConnections(server: Server, limits: ConnectionLimits, logger: Logger): ConnectionGuard {
  // Oldest first: a connection moves to the end when it connects and when an answer on it ends.
  const open = new Map<Socket, Tracked>();
  const counts = { evicted: 0, refused: 0 };
  let window: NodeJS.Timeout | undefined;

  const report = () => {
    window = undefined;
    logger.warn(
      { ...counts, maxConnections: limits.max, windowMs: limits.logWindowMs },
      'connections were closed to keep the open ones within the limit',
    );
    counts.evicted = 0;
    counts.refused = 0;
  };
  const count = (what: keyof typeof counts) => {
    counts[what] += 1;
    window ??= setTimeout(report, limits.logWindowMs).unref();
  };
  /** The connection to close for room: the oldest of the lowest rank. */
  const victim = (): Socket | undefined => {
    const now = performance.now();
    const oldest: (Socket | undefined)[] = [];
    for (const [socket, tracked] of open) {
      const r = rank(socket, tracked, now, limits.silentGraceMs);
      if (r === 0) return socket;
      if (r !== undefined) oldest[r] ??= socket;
    }
    return oldest.find(Boolean);
  };

  server.on('connection', (socket: Socket) => {
    if (open.size >= limits.max) {
      const room = victim();
      if (!room) {
        count('refused');
        socket.destroy();
        return;
      }
      open.delete(room);
      room.destroy();
      count('evicted');
    }
    const tracked: Tracked = { since: performance.now(), request: undefined, answered: false };
    open.set(socket, tracked);
    socket.once('close', () => open.delete(socket));
  });
  server.on('request', (req: IncomingMessage, res) => {
    const tracked = open.get(req.socket);
    if (!tracked) return;
    tracked.request = req;
    res.once('close', () => {
      tracked.request = undefined;
      tracked.answered = true;
      if (open.delete(req.socket)) open.set(req.socket, tracked);
    });
  });

  return {
    stop() {
      if (window === undefined) return;
      clearTimeout(window);
      report();
    },
  };
}
