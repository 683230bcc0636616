import { setTimeout as sleep } from 'node:timers/promises';
import type { ReceiverEvent } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import type { HttpServer } from '../../src/http/server.js';
import { captureLogs } from '../support/bolt.js';
import { commandBody, signatureHeaders } from '../support/slack-requests.js';
import { head, type RawClient, rawClient } from './raw-client.js';
import { receiverServer } from './receiver-server.js';

const SECRET = 'receiver-edges-signing-secret';
const NOW = 1_795_262_400;
const HEX = 'a'.repeat(64);

const logs = captureLogs();
let server: HttpServer | undefined;
let clients: RawClient[] = [];
let events: ReceiverEvent[] = [];
let answer: (event: ReceiverEvent) => Promise<void> = async (event) => event.ack();

afterEach(async () => {
  for (const c of clients) c.socket.destroy();
  clients = [];
  server?.closeAll();
  await server?.close();
  server = undefined;
  events = [];
  logs.raw.length = 0;
  answer = async (event) => event.ack();
});

async function serve(): Promise<number> {
  const onEvent = async (event: ReceiverEvent) => {
    events.push(event);
    await answer(event);
  };
  const started = await receiverServer({ secret: SECRET, nowSeconds: NOW, logger: logs.logger, onEvent });
  server = started.server;
  return started.port;
}

function client(port: number, ...parts: (string | Buffer)[]): RawClient {
  const c = rawClient(port, ...parts);
  clients.push(c);
  return c;
}

/** The first answer's status, or 'none' when none came within a generous while. */
async function statusOf(c: RawClient): Promise<number | 'none' | undefined> {
  return Promise.race([c.answered.then((a) => a.status), sleep(4000).then(() => 'none' as const)]);
}

describe('refused from the headers, its body never sent', () => {
  it('answers 401 to a form signed too long ago: only an unsigned form may be an SSL check', async () => {
    const port = await serve();
    const c = client(
      port,
      head('POST', '/slack/events', {
        'content-type': 'application/x-www-form-urlencoded',
        'content-length': '100',
        'x-slack-signature': `v0=${HEX}`,
        'x-slack-request-timestamp': `${NOW - 600}`,
      }),
    );
    expect(await statusOf(c)).toBe(401);
    expect(logs.lines.map((l) => l.reason)).toEqual(['stale']);
  });

  it.each([
    ['with something after the digits', `v0=${HEX}0`],
    ['with something before v0=', `xv0=${HEX}`],
  ])('answers 401 to a signature %s', async (_label, signature) => {
    const port = await serve();
    const c = client(
      port,
      head('POST', '/slack/events', {
        'content-type': 'application/json',
        'content-length': '100',
        'x-slack-signature': signature,
        'x-slack-request-timestamp': `${NOW}`,
      }),
    );
    expect(await statusOf(c)).toBe(401);
    expect(logs.lines.map((l) => l.reason)).toEqual(['signature_mismatch']);
  });
});

describe('a chunked body, its length not declared', () => {
  it('is refused 413 once past 1 MiB, the log saying the limit and no declared length', async () => {
    const port = await serve();
    const chunk = Buffer.alloc(1024 * 1024 + 1, 'x');
    const c = client(
      port,
      head('POST', '/slack/events', {
        'content-type': 'application/json',
        'transfer-encoding': 'chunked',
        'x-slack-signature': `v0=${HEX}`,
        'x-slack-request-timestamp': `${NOW}`,
      }),
      `${chunk.length.toString(16)}\r\n`,
      chunk,
      '\r\n',
    );
    expect(await statusOf(c)).toBe(413);
    const [line, ...more] = logs.lines;
    expect(more).toEqual([]);
    expect(line).toMatchObject({ level: 'warn', status: 413, reason: 'body_too_large', limit: 1024 * 1024 });
    expect(line).not.toHaveProperty('declared');
    expect(events).toEqual([]);
  });
});

describe('a body that never arrives', () => {
  it('is logged as dropped when the client goes away halfway', async () => {
    const port = await serve();
    const body = commandBody({ command: '/balance', text: '', response_url: 'https://hooks.slack.test/x' });
    const c = client(
      port,
      head('POST', '/slack/events', {
        'content-type': 'application/x-www-form-urlencoded',
        'content-length': String(body.length + 50),
        ...signatureHeaders(SECRET, body, { timestamp: NOW }),
      }),
      body,
    );
    await expect.poll(() => c.socket.bytesWritten).toBeGreaterThan(body.length);
    await sleep(50);
    c.socket.destroy();
    await expect
      .poll(() => logs.lines.map((l) => [l.level, l.reason, l.msg]))
      .toEqual([['warn', 'body_not_received', 'request dropped: its body did not arrive']]);
    expect(events).toEqual([]);
  });
});

describe('handing requests to Bolt', () => {
  const post = async (port: number, body: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`http://127.0.0.1:${port}/slack/events`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...signatureHeaders(SECRET, body, { timestamp: NOW }),
        ...headers,
      },
      body,
    });
    return { status: response.status, text: await response.text() };
  };
  const command = () =>
    commandBody({ command: '/balance', text: '', response_url: 'https://hooks.slack.test/x' });

  it('says no retry number when Slack sent none', async () => {
    const port = await serve();
    expect((await post(port, command())).status).toBe(200);
    expect(events).toHaveLength(1);
    expect(events[0]?.retryNum).toBeUndefined();
    expect(events[0]?.retryReason).toBeUndefined();
  });

  it('logs a failure after the ack once, as Bolt’s, not as a failed route', async () => {
    const port = await serve();
    answer = async (event) => {
      await event.ack({ text: 'acked' });
      throw new Error('after the ack');
    };
    expect(await post(port, command())).toEqual({ status: 200, text: '{"text":"acked"}' });
    await expect
      .poll(() => logs.lines.filter((l) => l.level === 'error').map((l) => l.msg))
      .toContain('processing a Slack request failed');
    // Whatever else the failure does, it does within a few turns of the event loop.
    await sleep(100);
    expect(logs.lines.filter((l) => l.level === 'error').map((l) => l.msg)).toEqual([
      'processing a Slack request failed',
    ]);
  });
});
