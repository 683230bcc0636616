import { getEventListeners, once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BodyTooLargeError, describeNetworkError, getText } from '../../src/payments/wire.js';

/** The few words a network failure is logged and reported with ("payment service unavailable: …"). */
describe('a network failure in a few words', () => {
  it('is its code when it has one', () => {
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    expect(describeNetworkError(reset)).toBe('ECONNRESET');
  });

  it('is its message when it has no code, or a code that is not a name', () => {
    expect(describeNetworkError(new Error('other side closed'))).toBe('other side closed');
    expect(describeNetworkError(Object.assign(new Error('socket hang up'), { code: 104 }))).toBe(
      'socket hang up',
    );
  });

  it('is "network error" when what failed is not even an Error', () => {
    expect(describeNetworkError('ECONNRESET')).toBe('network error');
    expect(describeNetworkError(undefined)).toBe('network error');
  });
});

/** One GET as read off the wire (src/payments/wire.ts getText), against a real server on port 0. */
describe('one GET, its body read up to its limit', () => {
  let server: Server;
  let pool: Pool;
  let origin: string;
  /** What the server does with each request; the paths it was asked for. */
  let answer: (req: IncomingMessage, res: ServerResponse) => void;
  const asked: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      asked.push(req.url ?? '');
      answer(req, res);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    pool = new Pool(origin, { connections: 2 });
  });
  afterAll(async () => {
    await pool.destroy();
    server.closeAllConnections();
    server.close();
  });

  const get = (limit = 100, signal = new AbortController().signal) =>
    getText(pool, {
      origin,
      path: '/api/v2/balance',
      headers: { accept: 'application/json' },
      signal,
      limit,
    });

  it('is the status and the whole text, however it was cut into chunks, a character split across two included', async () => {
    const euro = Buffer.from('€');
    answer = (_, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"amount":"1.5 ');
      res.write(euro.subarray(0, 1));
      setTimeout(() => res.end(Buffer.concat([euro.subarray(1), Buffer.from('"}')])), 5);
    };
    expect(await get()).toEqual({ status: 200, retryAfter: undefined, body: '{"amount":"1.5 €"}' });
    expect(asked.at(-1)).toBe('/api/v2/balance');
  });

  it('is any status as answered, with its Retry-After', async () => {
    answer = (_, res) => {
      res.writeHead(429, { 'retry-after': '7' });
      res.end('{"detail":"slow down"}');
    };
    expect(await get()).toEqual({ status: 429, retryAfter: '7', body: '{"detail":"slow down"}' });
  });

  it('is the text at exactly the limit, and BodyTooLargeError one byte past it', async () => {
    answer = (_, res) => res.end('12345');
    expect((await get(5)).body).toBe('12345');
    answer = (_, res) => {
      res.write('1234');
      res.end('56789');
    };
    await expect(get(5)).rejects.toThrow(new BodyTooLargeError('the body is larger than 5 bytes'));
  });

  it("fails with the connection's own error when it is cut mid-body", async () => {
    answer = (_, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('{"res');
      setTimeout(() => res.socket?.destroy(), 5);
    };
    await expect(get()).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
  });

  it("fails with the signal's reason when it is aborted while waiting for the answer", async () => {
    answer = () => undefined;
    const deadline = new AbortController();
    const reading = get(100, deadline.signal);
    const reason = new Error('deadline');
    setTimeout(() => deadline.abort(reason), 20);
    await expect(reading).rejects.toBe(reason);
  });

  it("leaves nothing listening on the caller's signal once it has ended, answered or failed", async () => {
    const deadline = new AbortController();
    answer = (_, res) => res.end('{}');
    await get(100, deadline.signal);
    answer = (_, res) => res.end('123456');
    await expect(get(5, deadline.signal)).rejects.toThrow(BodyTooLargeError);
    expect(getEventListeners(deadline.signal, 'abort')).toHaveLength(0);
  });

  it('sends nothing when its signal has already ended', async () => {
    const before = asked.length;
    const deadline = new AbortController();
    const reason = new Error('too late');
    deadline.abort(reason);
    await expect(get(100, deadline.signal)).rejects.toBe(reason);
    expect(asked).toHaveLength(before);
  });
});
