import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { guardConnections } from '../../src/http/connections.js';
import type { HttpServer } from '../../src/http/server.js';
import { captureLogs } from '../support/bolt.js';
import { commandBody, postToBot } from '../support/slack-requests.js';
import { type HeldConnections, head, holdConnections, type RawClient, rawClient } from './raw-client.js';
import { receiverServer } from './receiver-server.js';

/**
 * Issue 37 item 2: 256 idle connections, reopened as they were closed, kept Slack's requests and
 * /healthz out. A newcomer now always gets a turn: an idle or unfinished connection gives way.
 */

const SECRET = 'connections-test-signing-secret';
const logs = captureLogs();
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  logs.raw.length = 0;
});

/** The bot's server (limit 256) with Slack's endpoint and /healthz. */
async function botServer(): Promise<number> {
  const started = await receiverServer({
    secret: SECRET,
    nowSeconds: Math.floor(Date.now() / 1000),
    logger: logs.logger,
    onEvent: (event) => event.ack(),
    routes: { 'GET /healthz': (_req, res) => void res.writeHead(200).end('{"ok":true}') },
  });
  const server: HttpServer = started.server;
  cleanups.push(async () => {
    server.closeAll();
    await server.close();
  });
  return started.port;
}

async function hold(port: number, count: number, ...parts: string[]): Promise<HeldConnections> {
  const held = await holdConnections(port, count, ...parts);
  cleanups.push(() => held.stop());
  return held;
}

/** A signed slash command and a /healthz probe, each answered 200 within 3 s. */
async function expectServed(port: number) {
  const started = performance.now();
  const command = await postToBot(
    `http://127.0.0.1:${port}/slack/events`,
    commandBody({
      command: '/balance',
      text: '',
      response_url: 'https://hooks.slack.test/commands/T0HOME/1/x',
    }),
    SECRET,
  );
  const health = await fetch(`http://127.0.0.1:${port}/healthz`);
  expect([command.status, health.status]).toEqual([200, 200]);
  expect(performance.now() - started).toBeLessThan(3000);
}

describe('a new connection always gets a turn', () => {
  it('300 idle connections, reopened as closed, do not keep out a signed Slack request or /healthz', async () => {
    const port = await botServer();
    const held = await hold(port, 300);
    await expectServed(port);
    expect(held.closedUnanswered()).toBeGreaterThan(0);
  });

  it('300 connections stalled in their headers or body do not keep them out either', async () => {
    const port = await botServer();
    await hold(port, 150, 'GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n');
    const forged = {
      'x-slack-signature': `v0=${'0'.repeat(64)}`,
      'x-slack-request-timestamp': `${Math.floor(Date.now() / 1000)}`,
    };
    await hold(port, 150, head('POST', '/slack/events', { ...forged, 'content-length': '100' }), '{"type":');
    await expectServed(port);
  });
});

/** A plain server guarded with a small limit and window; `slow` requests wait until released. */
async function guarded(max: number, logWindowMs: number, silentGraceMs = 1000) {
  const waiting: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    if (req.url === '/slow') waiting.push(res);
    else res.writeHead(200).end('ok');
  });
  const guard = guardConnections(server, { max, logWindowMs, silentGraceMs }, logs.logger);
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const clients: RawClient[] = [];
  const client = (...parts: string[]) => {
    const c = rawClient((server.address() as AddressInfo).port, ...parts);
    clients.push(c);
    return c;
  };
  cleanups.push(async () => {
    for (const c of clients) c.socket.destroy();
    guard.stop();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { client, waiting };
}

const connected = (cs: RawClient[]) =>
  Promise.all(cs.map((c) => new Promise((resolve) => c.socket.once('connect', resolve))));
const closures = () =>
  logs.lines.filter((l) => l.msg === 'connections were closed to keep the open ones within the limit');

describe('the connection that gives way', () => {
  it('is one silent past the grace, then one half sent, then one idle between requests, then one just connected; never one being answered', async () => {
    const { client, waiting } = await guarded(5, 60_000, 1000);
    const answering = [client(head('GET', '/slow', {}))];
    const halfSent = client('GET /fast HTTP/1.1\r\n');
    const kept = client(head('GET', '/fast', {}));
    await kept.answered;
    const silent = client();
    await connected([silent]);
    await sleep(1100);
    const fresh = client();
    await connected([fresh]);

    // Each newcomer's request is answered slowly, so it stays open and is never closed for room.
    for (const [i, gone] of [silent, halfSent, kept, fresh].entries()) {
      answering.push(client(head('GET', '/slow', {})));
      await expect.poll(() => waiting.length).toBe(i + 2);
      await gone.closed;
      expect([silent, halfSent, kept, fresh].map((c) => c.socket.destroyed)).toEqual(
        [0, 1, 2, 3].map((j) => j <= i),
      );
    }
    for (const res of waiting) res.writeHead(200).end('late');
    const statuses = await Promise.all(answering.map(async (c) => (await c.answered).status));
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
  });

  it('is none when every connection is answering a whole request: the newcomer is refused until one ends', async () => {
    const { client, waiting } = await guarded(2, 60_000);
    client(head('GET', '/slow', {}));
    client(head('GET', '/slow', {}));
    await expect.poll(() => waiting.length).toBe(2);
    expect((await client(head('GET', '/fast', {})).closed).status).toBeUndefined();
    waiting[0]?.writeHead(200, { connection: 'close' }).end();
    await expect
      .poll(async () => (await client(head('GET', '/fast', { connection: 'close' })).closed).status)
      .toBe(200);
  });
});

describe('the log of connections closed for room', () => {
  it('is written once at the end of the window with every closure counted, not at the first', async () => {
    const { client, waiting } = await guarded(3, 2000);
    client(head('GET', '/slow', {}));
    await expect.poll(() => waiting.length).toBe(1);
    const held = Array.from({ length: 2 }, () => client());
    await connected(held);
    // 40 idle newcomers, each closing the oldest idle one; then 2 whole requests fill the limit.
    const burst = Array.from({ length: 40 }, () => client());
    await connected(burst);
    client(head('GET', '/slow', {}));
    client(head('GET', '/slow', {}));
    await expect.poll(() => waiting.length).toBe(3);
    const refused = Array.from({ length: 5 }, () => client());
    await Promise.all(refused.map((c) => c.closed));
    expect(closures()).toEqual([]);
    await expect
      .poll(() => closures(), { timeout: 5000 })
      .toEqual([
        expect.objectContaining({
          level: 'warn',
          evicted: 42,
          refused: 5,
          maxConnections: 3,
          windowMs: 2000,
        }),
      ]);
  });
});
