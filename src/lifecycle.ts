import type { App } from '@slack/bolt';
import type { HttpServer, RouteHandler } from './http/server.js';
import type { Inflight } from './inflight.js';
import type { Scheduler } from './scheduler.js';

export interface Bot {
  /** Starts taking requests; resolves with the HTTP port (Slack's endpoint in HTTP mode, /healthz in both). */
  start(): Promise<{ port: number }>;
  /** Stops taking requests, then waits up to `graceMs` for replies in flight. */
  stop(graceMs: number): Promise<{ drained: boolean }>;
}

interface BotParts {
  server: HttpServer;
  /** METRICS_PORT: `/metrics` on a server of its own, started and stopped with the bot. */
  metrics?: { server: HttpServer; port: number } | undefined;
  app: App;
  scheduler: Scheduler;
  inflight: Inflight;
  http: { port: number; host: string | undefined };
  /**
   * Starts Bolt (Socket Mode opens its connection here, retrying while Slack cannot be reached);
   * by default `app.start()`. `stopped` aborts when a stop comes first: it then returns at once.
   */
  startApp?: (stopped: AbortSignal) => Promise<unknown>;
  /** Told once everything runs, for the start's log line. */
  started: (port: number) => void;
}

/**
 * Start and stop, the same for both bots: start listens, starts background work, then Bolt;
 * stop undoes it (no new requests, no new background work), waits for what is in
 * flight, and a stop that comes while starting cuts the start short, then undoes it. `healthz`
 * tells liveness: 200 from the moment the bot listens (Socket Mode's connection may still be
 * retrying) until it stops.
 */
export function lifecycle() {
  let ready = false;
  const healthz: RouteHandler = (_req, res) => {
    res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: ready }));
  };

  function bot(parts: BotParts): Bot {
    const { server, app, scheduler, inflight } = parts;
    let starting: Promise<unknown> | undefined;
    const stopped = new AbortController();

    async function start(): Promise<{ port: number }> {
      const port = await server.listen(parts.http.port, parts.http.host);
      await parts.metrics?.server.listen(parts.metrics.port, parts.http.host, 'METRICS_PORT');
      ready = true;
      // Background work needs only the Web API: it runs while Socket Mode's connection may still
      // be retrying, so watches and the outbox do not wait on it.
      scheduler.start();
      await (parts.startApp ?? (() => app.start()))(stopped.signal);
      if (stopped.signal.aborted) return { port };
      parts.started(port);
      return { port };
    }

    return {
      start() {
        const started = start();
        starting = started;
        return started;
      },
      async stop(graceMs) {
        stopped.abort();
        await starting?.catch(() => undefined);
        ready = false;
        // Stop taking requests: no new connections (requests being acked still finish), and in
        // Socket Mode no more envelopes.
        const closed = Promise.all([server.close(), parts.metrics?.server.close()]);
        await app.stop();
        // No more background work is claimed; what runs finishes with the replies in flight.
        await scheduler.stop();
        const drained = await inflight.drain(graceMs);
        server.closeAll();
        parts.metrics?.server.closeAll();
        await closed;
        return { drained };
      },
    };
  }

  return { healthz, bot };
}
