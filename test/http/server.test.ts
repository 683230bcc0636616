import { afterEach, describe, expect, it } from 'vitest';
import { createHttpServer, type HttpServer, type Routes } from '../../src/http/server.js';
import { captureLogs } from '../support/bolt.js';

describe('the HTTP server', () => {
  let server: HttpServer | undefined;
  afterEach(async () => {
    server?.closeAll();
    await server?.close();
  });

  async function serve(routes: Routes) {
    const logs = captureLogs();
    server = createHttpServer(routes, logs.logger);
    const port = await server.listen(0, '127.0.0.1');
    return { base: `http://127.0.0.1:${port}`, logs };
  }

  it('routes by method and path, ignoring the query string; anything else is 404', async () => {
    const { base } = await serve({ 'GET /healthz': (_req, res) => void res.writeHead(204).end() });
    expect((await fetch(`${base}/healthz?probe=1`)).status).toBe(204);
    expect((await fetch(`${base}/healthz`, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`${base}/other`)).status).toBe(404);
  });

  it('answers 500 for a handler that throws, logs it with the path, and keeps serving', async () => {
    const { base, logs } = await serve({
      'GET /boom': () => {
        throw new Error('handler bug');
      },
      'GET /ok': (_req, res) => void res.writeHead(200).end('fine'),
    });
    expect((await fetch(`${base}/boom?x=1`)).status).toBe(500);
    expect(logs.lines.find((l) => l.msg === 'HTTP route failed')).toMatchObject({
      level: 'error',
      path: '/boom',
      err: { message: 'handler bug' },
    });
    expect(await (await fetch(`${base}/ok`)).text()).toBe('fine');
  });

  it('ends a response whose handler failed after it began answering, keeping its status', async () => {
    const { base } = await serve({
      'GET /half': async (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
        throw new Error('failed midway');
      },
    });
    const response = await fetch(`${base}/half`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('partial');
  });
});
