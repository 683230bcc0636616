import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpServers, type HttpServer, type RouteHandler, type Routes } from '../../src/http/server.js';
import { captureLogs } from '../support/bolt.js';
import { head, type RawClient, rawClient } from './raw-client.js';

const servers: HttpServer[] = [];
const clients: RawClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.socket.destroy();
  for (const s of servers.splice(0)) {
    s.closeAll();
    await s.close();
  }
});

const answer =
  (body: string): RouteHandler =>
  (_req, res) =>
    void res.writeHead(200).end(body);
const operator = { healthz: answer('healthy'), metrics: answer('slackbot_up 1') };
const routes: Routes = { 'GET /slack/install': answer('install') };

async function listen(server: HttpServer) {
  servers.push(server);
  return `http://127.0.0.1:${await server.listen(0, '127.0.0.1')}`;
}

const statusOf = async (url: string) => (await fetch(url)).status;

describe('the bot’s servers', () => {
  it('serve /metrics on the public port when no METRICS_PORT is set', async () => {
    const servers = createHttpServers(routes, operator, captureLogs().logger, undefined);
    expect(servers.metrics).toBeUndefined();
    const base = await listen(servers.server);
    expect(await (await fetch(`${base}/metrics`)).text()).toBe('slackbot_up 1');
    expect(await statusOf(`${base}/healthz`)).toBe(200);
    expect(await statusOf(`${base}/slack/install`)).toBe(200);
  });

  it('with METRICS_PORT, serve /metrics and /healthz there alone, and not /metrics on the public port', async () => {
    const servers = createHttpServers(routes, operator, captureLogs().logger, 9464);
    expect(servers.metrics?.port).toBe(9464);
    if (!servers.metrics) return;
    const base = await listen(servers.server);
    const metricsBase = await listen(servers.metrics.server);
    expect(await statusOf(`${base}/metrics`)).toBe(404);
    expect(await statusOf(`${base}/healthz`)).toBe(200);
    expect(await statusOf(`${base}/slack/install`)).toBe(200);
    expect(await (await fetch(`${metricsBase}/metrics`)).text()).toBe('slackbot_up 1');
    expect(await (await fetch(`${metricsBase}/healthz`)).text()).toBe('healthy');
    expect(await statusOf(`${metricsBase}/slack/install`)).toBe(404);
  });

  it('closes every connection when told to, even one in the middle of a request', async () => {
    const { server } = createHttpServers(routes, operator, captureLogs().logger, undefined);
    const port = Number(new URL(await listen(server)).port);
    // Headers not finished: not idle, so only closeAll ends it before the server's time-outs.
    const c = rawClient(port, head('GET', '/healthz', {}).replace(/\r\n\r\n$/, '\r\n'));
    clients.push(c);
    await sleep(50);
    server.closeAll();
    const closed = await Promise.race([c.closed.then(() => 'closed'), sleep(3000).then(() => 'still open')]);
    expect(closed).toBe('closed');
  });
});
