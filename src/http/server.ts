import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../logger.js';
import { guardConnections } from './connections.js';

// Limits of every connection, on every route (Slack's, the install pages, /healthz, /metrics), so
// that nobody can hold the bot's memory or its connections for long (docs/slack.md#request-limits).
/** Time to receive a request's headers: Slack, probes and browsers send them at once; 5 s allows a few retransmissions. */
const HEADERS_TIMEOUT_MS = 5_000;
/** Time to receive a whole request, body included: Slack waits only 3 s for the answer to one. */
const REQUEST_TIMEOUT_MS = 5_000;
/** An idle kept-alive connection is closed after this (Node's default, made explicit): it holds a connection slot. */
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** How often Node looks for requests past those times; its default (30 s) would let them live that much longer. */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;
/**
 * Open connections at most, all routes together; one more makes room by closing the one that has
 * waited longest without a request being answered (src/http/connections.ts). Slack, probes and a
 * scrape need far fewer.
 */
const MAX_CONNECTIONS = 256;
/** A connection that has sent nothing this long is the first to give way when one more arrives. */
const SILENT_GRACE_MS = 1_000;
/** Connections closed to keep within MAX_CONNECTIONS are logged once per this window, with their counts. */
const DROP_LOG_WINDOW_MS = 10_000;

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** Handlers by `METHOD /path`; the query string is ignored when matching. */
export type Routes = Readonly<Record<`${'GET' | 'POST'} /${string}`, RouteHandler>>;

/**
 * The server could not listen: the port is taken, needs privileges, or HOST is no address of
 * this machine. Its message names the setting to change and how, and is all an operator needs.
 */
export class ListenError extends Error {
  override readonly name = 'ListenError';
}

/** What to tell the operator when listening on `port` (the value of `setting`) fails with `error`. */
function listenFailure(
  error: NodeJS.ErrnoException,
  setting: string,
  port: number,
  host: string | undefined,
) {
  const on = host ? ` on ${host}` : '';
  switch (error.code) {
    case 'EADDRINUSE':
      return `${setting} ${port} is already in use${on}: stop whatever listens there, or set ${setting} to a free port`;
    case 'EACCES':
      return `${setting} ${port} needs privileges this process does not have: set ${setting} to a port from 1024 up`;
    case 'EADDRNOTAVAIL':
      return `HOST ${host} is not an address of this machine: set HOST to one of its addresses, or unset it to listen on all`;
    default:
      return `could not listen on ${setting} ${port}${on} (${error.code ?? error.message})`;
  }
}

export interface HttpServer {
  /**
   * Listens on `port` (0: any free port) and resolves with the port it got; rejects with a
   * ListenError naming `setting` (the variable that chose the port: PORT by default).
   */
  listen(port: number, host: string | undefined, setting?: string): Promise<number>;
  /**
   * Stops accepting connections and closes idle keep-alive ones at once; resolves when the last
   * connection has ended (requests being answered still finish).
   */
  close(): Promise<void>;
  /** Closes every connection still open, busy or not. */
  closeAll(): void;
}

/**
 * The bot's one HTTP server, in both modes: Slack's requests in HTTP mode, and the operator's
 * routes (/healthz, /metrics), which are not signature-checked. A handler that throws answers
 * 500 and is logged; it never takes the process down. A request whose headers or whole self do
 * not arrive in time is answered 408 and its connection closed (by Node), and a connection over
 * MAX_CONNECTIONS makes room by closing an idle or unfinished one.
 */
/** The bot's servers: the public one, and with METRICS_PORT one of the operator's for `/metrics`. */
interface HttpServers {
  server: HttpServer;
  /** `/metrics` (and `/healthz`) on a port of their own, which a platform need not expose. */
  metrics?: { server: HttpServer; port: number };
}

/**
 * The public server takes Slack's requests (`routes`) and `/healthz`; `/metrics` too, unless
 * `metricsPort` is set: then it is served on that port alone, with `/healthz` beside it, so that
 * on a platform with one public port the metrics are not on it.
 */
export function createHttpServers(
  routes: Routes,
  operator: { healthz: RouteHandler; metrics: RouteHandler },
  logger: Logger,
  metricsPort: number | undefined,
): HttpServers {
  const health = { 'GET /healthz': operator.healthz };
  const metrics = { ...health, 'GET /metrics': operator.metrics };
  if (metricsPort === undefined) return { server: createHttpServer({ ...routes, ...metrics }, logger) };
  return {
    server: createHttpServer({ ...routes, ...health }, logger),
    metrics: { server: createHttpServer(metrics, logger), port: metricsPort },
  };
}

export function createHttpServer(routes: Routes, logger: Logger): HttpServer {
  const table = new Map<string, RouteHandler>(Object.entries(routes));
  const options = {
    headersTimeout: HEADERS_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
  };
  const server: Server = createServer(options, (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const handler = table.get(`${req.method} ${path}`);
    if (!handler) {
      res.writeHead(404).end();
      return;
    }
    Promise.resolve()
      .then(() => handler(req, res))
      .catch((error: unknown) => {
        logger.error({ err: error, path }, 'HTTP route failed');
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
  });
  const guard = guardConnections(
    server,
    {
      max: MAX_CONNECTIONS,
      silentGraceMs: SILENT_GRACE_MS,
      logWindowMs: DROP_LOG_WINDOW_MS,
    },
    logger,
  );

  return {
    async listen(port, host, setting = 'PORT') {
      server.listen(port, host);
      try {
        await once(server, 'listening');
      } catch (error) {
        throw new ListenError(listenFailure(error as NodeJS.ErrnoException, setting, port, host), {
          cause: error,
        });
      }
      return (server.address() as AddressInfo).port;
    },
    close() {
      guard.stop();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      return closed;
    },
    closeAll() {
      server.closeAllConnections();
    },
  };
}
