import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../logger.js';

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** Handlers by `METHOD /path`; the query string is ignored when matching. */
export type Routes = Readonly<Record<`${'GET' | 'POST'} /${string}`, RouteHandler>>;

export interface HttpServer {
  /** Listens on `port` (0: any free port) and resolves with the port it got. */
  listen(port: number, host: string | undefined): Promise<number>;
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
 * 500 and is logged; it never takes the process down.
 */
export function createHttpServer(routes: Routes, logger: Logger): HttpServer {
  const table = new Map<string, RouteHandler>(Object.entries(routes));
  const server: Server = createServer((req, res) => {
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

  return {
    async listen(port, host) {
      server.listen(port, host);
      await once(server, 'listening');
      return (server.address() as AddressInfo).port;
    },
    close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      return closed;
    },
    closeAll() {
      server.closeAllConnections();
    },
  };
}
