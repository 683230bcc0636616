import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createResponseUrlClient, ResponseUrlError } from '../../src/slack/response-url.js';

/** A response_url on port 0 that answers each post with the next status queued, then 200. */
let server: Server;
let url: string;
let statuses: { status: number; retryAfter?: string }[] = [];
let received: string[] = [];
let contentTypes: (string | undefined)[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      received.push(body);
      contentTypes.push(req.headers['content-type']);
      const next = statuses.shift() ?? { status: 200 };
      res.writeHead(next.status, next.retryAfter ? { 'retry-after': next.retryAfter } : {}).end('ok');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/response`;
});
afterAll(() => {
  server.close();
});
beforeEach(() => {
  statuses = [];
  received = [];
  contentTypes = [];
});

function client(attempts = 4) {
  const sleeps: number[] = [];
  const responseUrls = createResponseUrlClient({
    attempts,
    baseDelayMs: 100,
    maxDelayMs: 5000,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
  return { responseUrls, sleeps };
}

const message = { response_type: 'ephemeral' as const, text: 'hello' };

describe('response_url client', () => {
  it('posts the message as JSON', async () => {
    await client().responseUrls.post(url, message);
    expect(received.map((b) => JSON.parse(b))).toEqual([message]);
    expect(contentTypes).toEqual(['application/json']);
  });

  it('retries a 500 with a doubling backoff until Slack takes the reply', async () => {
    statuses = [{ status: 500 }, { status: 503 }];
    const { responseUrls, sleeps } = client();
    await responseUrls.post(url, message);
    expect(received).toHaveLength(3);
    expect(sleeps).toEqual([100, 200]);
  });

  it('waits what Retry-After asks on a 429, capped', async () => {
    statuses = [
      { status: 429, retryAfter: '2' },
      { status: 429, retryAfter: '3600' },
    ];
    const { responseUrls, sleeps } = client();
    await responseUrls.post(url, message);
    expect(sleeps).toEqual([2000, 5000]);
  });

  it('does not retry an expired response_url (4xx)', async () => {
    statuses = [{ status: 404 }];
    const { responseUrls, sleeps } = client();
    const error = await responseUrls.post(url, message).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseUrlError);
    expect(error).toMatchObject({
      status: 404,
      transient: false,
      message: 'the response_url answered HTTP 404',
    });
    expect(received).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('gives up after its attempts, with the last failure', async () => {
    statuses = [{ status: 502 }, { status: 502 }, { status: 502 }];
    const { responseUrls } = client(3);
    await expect(responseUrls.post(url, message)).rejects.toMatchObject({ status: 502, transient: true });
    expect(received).toHaveLength(3);
  });

  it('retries when nothing answers at all', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/x`;
    closed.close();
    await once(closed, 'close');
    const { responseUrls, sleeps } = client(2);
    const error = await responseUrls.post(deadUrl, message).catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: 'ResponseUrlError',
      status: undefined,
      transient: true,
      message: 'no answer from the response_url',
    });
    expect((error as Error).cause).toBeInstanceOf(Error);
    expect(sleeps).toEqual([100]);
  });

  it('tells how each post ended, once, after its retries', async () => {
    const results: string[] = [];
    const responseUrls = createResponseUrlClient({
      attempts: 2,
      sleep: async () => undefined,
      onPost: (result) => results.push(result),
    });
    statuses = [{ status: 500 }];
    await responseUrls.post(url, message);
    statuses = [{ status: 404 }];
    await responseUrls.post(url, message).catch(() => undefined);
    statuses = [{ status: 503 }, { status: 429 }];
    await responseUrls.post(url, message).catch(() => undefined);
    expect(results).toEqual(['ok', 'refused', 'transient']);
  });
});
