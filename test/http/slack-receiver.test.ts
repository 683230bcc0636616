import type { App, ReceiverEvent } from '@slack/bolt';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHttpServer, type HttpServer } from '../../src/http/server.js';
import { SlackHttpReceiver, signatureProblem } from '../../src/http/slack-receiver.js';
import { boltLogger } from '../../src/logger.js';
import { captureLogs } from '../support/bolt.js';
import { commandBody, signatureHeaders } from '../support/slack-requests.js';
import { receiverServer } from './receiver-server.js';

const SECRET = 'receiver-test-signing-secret';
const NOW = 1_795_262_400;

let server: HttpServer;
let url: string;
let events: ReceiverEvent[] = [];
let answer: (event: ReceiverEvent) => Promise<void> = async (event) => event.ack();
const logs = captureLogs();

beforeAll(async () => {
  const onEvent = async (event: ReceiverEvent) => {
    events.push(event);
    await answer(event);
  };
  const started = await receiverServer({ secret: SECRET, nowSeconds: NOW, logger: logs.logger, onEvent });
  server = started.server;
  url = `http://127.0.0.1:${started.port}/slack/events`;
});
afterAll(async () => {
  server.closeAll();
  await server.close();
});
beforeEach(() => {
  events = [];
  logs.raw.length = 0;
  answer = async (event) => event.ack();
});

async function post(
  body: string,
  opts: {
    contentType?: string;
    timestamp?: number;
    signature?: string | null;
    headers?: Record<string, string>;
  } = {},
) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': opts.contentType ?? 'application/x-www-form-urlencoded',
      ...signatureHeaders(SECRET, body, { timestamp: opts.timestamp ?? NOW, signature: opts.signature }),
      ...opts.headers,
    },
    body,
  });
  return { status: response.status, text: await response.text() };
}

const command = () =>
  commandBody({ command: '/balance', text: '', response_url: 'https://hooks.slack.test/x' });

describe('signatureProblem', () => {
  const sign = (body: string, ts: number) =>
    signatureHeaders(SECRET, body, { timestamp: ts })['x-slack-signature'];
  it.each<[string, { signature: string | undefined; timestamp: string | undefined }, string | undefined]>([
    ['a good signature', { signature: sign('b', NOW), timestamp: String(NOW) }, undefined],
    [
      'exactly five minutes old',
      { signature: sign('b', NOW - 300), timestamp: String(NOW - 300) },
      undefined,
    ],
    [
      'exactly five minutes ahead',
      { signature: sign('b', NOW + 300), timestamp: String(NOW + 300) },
      undefined,
    ],
    ['one second too old', { signature: sign('b', NOW - 301), timestamp: String(NOW - 301) }, 'stale'],
    [
      'one second too far ahead',
      { signature: sign('b', NOW + 301), timestamp: String(NOW + 301) },
      'from_the_future',
    ],
    ['no signature', { signature: undefined, timestamp: String(NOW) }, 'no_signature'],
    ['no timestamp', { signature: sign('b', NOW), timestamp: undefined }, 'bad_timestamp'],
    ['a timestamp that is not a number', { signature: sign('b', NOW), timestamp: '17e8' }, 'bad_timestamp'],
    ['another body', { signature: sign('other', NOW), timestamp: String(NOW) }, 'signature_mismatch'],
    ['a shorter signature', { signature: 'v0=abc', timestamp: String(NOW) }, 'signature_mismatch'],
  ])('%s → %s', (_label, headers, problem) => {
    expect(signatureProblem(SECRET, headers, 'b', NOW)).toBe(problem);
  });
});

describe('SlackHttpReceiver', () => {
  it('hands a signed command to Bolt and answers with its ack', async () => {
    answer = async (event) => event.ack({ text: 'hi' });
    const result = await post(command());
    expect(result).toEqual({ status: 200, text: '{"text":"hi"}' });
    expect(events[0]?.body).toMatchObject({ command: '/balance', team_id: 'T0HOME' });
  });

  it('passes Slack’s retry number and reason on', async () => {
    await post('{"type":"event_callback","event":{"type":"link_shared"}}', {
      contentType: 'application/json',
      headers: { 'x-slack-retry-num': '2', 'x-slack-retry-reason': 'http_timeout' },
    });
    expect(events[0]).toMatchObject({ retryNum: 2, retryReason: 'http_timeout' });
  });

  it.each([
    ['a signed null payload', 'payload=null', 'application/x-www-form-urlencoded'],
    ['a signed JSON null', 'null', 'application/json'],
    ['a signed JSON array', '[1,2]', 'application/json'],
    ['a signed number', '42', 'application/json'],
  ])('answers %s with 400, logged once, never reaching Bolt', async (_label, body, contentType) => {
    expect((await post(body, { contentType })).status).toBe(400);
    expect(events).toEqual([]);
    expect(logs.lines.map((l) => [l.level, l.msg])).toEqual([
      ['warn', 'request refused: body not an object'],
    ]);
  });

  it('answers a signed body that is not JSON with 400', async () => {
    expect((await post('{"type":', { contentType: 'application/json' })).status).toBe(400);
    expect(logs.lines.map((l) => l.reason)).toEqual(['malformed_body']);
  });

  it.each([
    [
      'six minutes from the future',
      { timestamp: NOW + 360 },
      'from_the_future',
      'request refused: from the future',
    ],
    ['six minutes old', { timestamp: NOW - 360 }, 'stale', 'request refused: stale'],
    [
      'a forged signature',
      { signature: `v0=${'0'.repeat(64)}` },
      'signature_mismatch',
      'request refused: signature mismatch',
    ],
    ['no signature', { signature: null }, 'no_signature', 'request refused: no signature'],
  ])('refuses %s with 401', async (_label, opts, reason, msg) => {
    expect((await post(command(), opts)).status).toBe(401);
    expect(events).toEqual([]);
    expect(logs.lines).toEqual([expect.objectContaining({ level: 'warn', status: 401, reason, msg })]);
  });

  it('answers Slack’s unsigned SSL check with 200 and nothing else', async () => {
    expect(await post('ssl_check=1&token=x', { signature: null })).toEqual({ status: 200, text: '' });
    expect(events).toEqual([]);
  });

  it('answers URL verification with the challenge', async () => {
    const result = await post('{"type":"url_verification","challenge":"c-123"}', {
      contentType: 'application/json',
    });
    expect(result).toEqual({ status: 200, text: '{"challenge":"c-123"}' });
  });

  it('refuses a body over 1 MiB with 413, and takes one of exactly 1 MiB', async () => {
    const big = `text=${'x'.repeat(1024 * 1024)}`;
    expect((await post(big)).status).toBe(413);
    expect(logs.lines.map((l) => [l.status, l.reason])).toEqual([[413, 'body_too_large']]);
    const exact = `text=${'x'.repeat(1024 * 1024 - 5)}`;
    expect((await post(exact)).status).toBe(200);
  });

  it('reads a form whatever the spacing and parameters of its content type', async () => {
    expect(
      (await post(command(), { contentType: 'application/x-www-form-urlencoded ; charset=utf-8' })).status,
    ).toBe(200);
    expect(events[0]?.body).toMatchObject({ command: '/balance' });
  });

  it('answers a body without a content type as JSON', async () => {
    const response = await fetch(url, {
      method: 'POST',
      headers: signatureHeaders(SECRET, '{"type":"url_verification","challenge":"c-9"}', { timestamp: NOW }),
      body: new Blob(['{"type":"url_verification","challenge":"c-9"}']),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.text()).toBe('{"challenge":"c-9"}');
  });

  it('logs the error when processing throws, and answers 500 only if nothing was sent yet', async () => {
    answer = async (event) => {
      await event.ack({ text: 'acked' });
      throw new Error('after the ack');
    };
    expect(await post(command())).toEqual({ status: 200, text: '{"text":"acked"}' });
    expect(logs.lines.find((l) => l.level === 'error')).toMatchObject({
      msg: 'processing a Slack request failed',
      err: { message: 'after the ack' },
    });
  });

  it('answers 500, and lives on, when processing throws before the ack', async () => {
    answer = async () => {
      throw new Error('boom');
    };
    expect((await post(command())).status).toBe(500);
    expect(logs.lines.find((l) => l.level === 'error')?.msg).toBe('processing a Slack request failed');
    answer = async (event) => event.ack();
    expect((await post(command())).status).toBe(200);
  });
});

describe('the HTTP server', () => {
  it('answers 404 to a path or method it has no route for', async () => {
    expect((await fetch(url.replace('/slack/events', '/nope'))).status).toBe(404);
    expect((await fetch(url)).status).toBe(404); // GET, not POST
  });
});

describe('the receiver on the real clock', () => {
  it('takes a request signed now, and refuses one signed six minutes ago', async () => {
    const receiver = new SlackHttpReceiver({
      signingSecret: SECRET,
      logger: logs.logger,
      boltLogger: boltLogger(logs.logger),
    });
    receiver.init({ processEvent: async (event: ReceiverEvent) => event.ack() } as unknown as App);
    const own = createHttpServer({ 'POST /slack/events': receiver.handle }, logs.logger);
    const at = `http://127.0.0.1:${await own.listen(0, '127.0.0.1')}/slack/events`;
    const now = Math.floor(Date.now() / 1000);
    const send = (timestamp: number) =>
      fetch(at, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          ...signatureHeaders(SECRET, command(), { timestamp }),
        },
        body: command(),
      });
    try {
      expect((await send(now)).status).toBe(200);
      expect((await send(now - 360)).status).toBe(401);
    } finally {
      own.closeAll();
      await own.close();
    }
  });
});
