import type { ReceiverEvent } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import type { HttpServer, Routes } from '../../src/http/server.js';
import { captureLogs } from '../support/bolt.js';
import { signatureHeaders } from '../support/slack-requests.js';
import { head, type RawClient, rawClient } from './raw-client.js';
import { receiverServer } from './receiver-server.js';

/**
 * What anyone on the internet can make the bot's HTTP server hold (issue 28): requests refused
 * from their headers, bodies cut at the limit, stalled requests cut off (the connection limit: connections.test.ts).
 * Against a real server on a free port, with clients that send half a request and wait.
 */

const SECRET = 'limits-test-signing-secret';
const NOW = 1_795_262_400;
const MiB = 1024 * 1024;
/** A signature of the right shape that matches nothing: what anyone can send without the secret. */
const FORGED = `v0=${'0'.repeat(64)}`;

const logs = captureLogs();
let server: HttpServer | undefined;
let clients: RawClient[] = [];
let events: ReceiverEvent[] = [];

afterEach(async () => {
  for (const c of clients) c.socket.destroy();
  clients = [];
  server?.closeAll();
  await server?.close();
  server = undefined;
  events = [];
  logs.raw.length = 0;
});

/** The bot's server with Slack's endpoint, an install page and /healthz; resolves with its port. */
async function serve(): Promise<number> {
  const onEvent = async (event: ReceiverEvent) => {
    events.push(event);
    await event.ack();
  };
  const routes = {
    'GET /slack/install': (_req, res) => void res.writeHead(200).end('<a>Add to Slack</a>'),
    'GET /healthz': (_req, res) => void res.writeHead(200).end('{"ok":true}'),
  } satisfies Routes;
  const started = await receiverServer({
    secret: SECRET,
    nowSeconds: NOW,
    logger: logs.logger,
    onEvent,
    routes,
  });
  server = started.server;
  return started.port;
}

function client(port: number, ...parts: (string | Buffer)[]): RawClient {
  const c = rawClient(port, ...parts);
  clients.push(c);
  return c;
}

const eventsHead = (headers: Record<string, string>) =>
  head('POST', '/slack/events', { 'content-type': 'application/json', ...headers });

describe('refused from the headers, before the body is read', () => {
  it('answers 401 at once to an unsigned request that announced 4 MiB and stalled before sending any', async () => {
    const port = await serve();
    const c = client(
      port,
      eventsHead({ 'content-length': String(4 * MiB), 'x-slack-request-timestamp': `${NOW}` }),
    );
    const answer = await c.closed;
    expect(answer.status).toBe(401);
    expect(answer.closedMs).toBeLessThan(1000); // closed by the server, long before any timeout
    expect(logs.lines.map((l) => [l.status, l.reason])).toEqual([[401, 'no_signature']]);
  });

  it.each([
    ['six minutes old', NOW - 360, 'stale'],
    ['six minutes ahead', NOW + 360, 'from_the_future'],
  ])('answers 401 at once to a request signed %s, its body never sent', async (_label, timestamp, reason) => {
    const port = await serve();
    const headers = { 'x-slack-signature': FORGED, 'x-slack-request-timestamp': `${timestamp}` };
    const answer = await client(port, eventsHead({ ...headers, 'content-length': String(MiB) })).closed;
    expect(answer.status).toBe(401);
    expect(answer.closedMs).toBeLessThan(1000);
    expect(logs.lines.map((l) => l.reason)).toEqual([reason]);
  });

  it('answers 401 at once to a signature that cannot be one, whatever the body', async () => {
    const port = await serve();
    const headers = { 'x-slack-signature': 'v0=abc', 'x-slack-request-timestamp': `${NOW}` };
    const answer = await client(port, eventsHead({ ...headers, 'content-length': '100' })).closed;
    expect(answer.status).toBe(401);
    expect(logs.lines.map((l) => l.reason)).toEqual(['signature_mismatch']);
  });

  it('answers 413 at once to a body declared over 1 MiB, and takes a signed one of exactly 1 MiB', async () => {
    const port = await serve();
    const headers = { 'x-slack-signature': FORGED, 'x-slack-request-timestamp': `${NOW}` };
    const over = await client(port, eventsHead({ ...headers, 'content-length': String(MiB + 1) })).closed;
    expect(over.status).toBe(413);
    expect(over.closedMs).toBeLessThan(1000);
    expect(logs.lines).toEqual([
      expect.objectContaining({ status: 413, reason: 'body_too_large', declared: MiB + 1, limit: MiB }),
    ]);

    const [open, close] = ['{"type":"event_callback","pad":"', '"}'];
    const body = `${open}${'x'.repeat(MiB - open.length - close.length)}${close}`;
    expect(Buffer.byteLength(body)).toBe(MiB);
    const response = await fetch(`http://127.0.0.1:${port}/slack/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signatureHeaders(SECRET, body, { timestamp: NOW }) },
      body,
    });
    expect(response.status).toBe(200);
    expect(events).toHaveLength(1);
  });

  it('reads no more than 1 KiB of an unsigned form, still answering Slack’s SSL check', async () => {
    const port = await serve();
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const big = head('POST', '/slack/events', { ...form, 'content-length': '2000' });
    expect((await client(port, big).closed).status).toBe(401);
    const check = 'ssl_check=1&token=x';
    const small = head('POST', '/slack/events', { ...form, 'content-length': String(check.length) });
    expect((await client(port, small, check).answered).status).toBe(200);
  });
});

describe('a chunked body (no length announced)', () => {
  it('is read only up to 1 MiB: past it the answer is 413 and the connection closes, the rest unread', async () => {
    const port = await serve();
    const headers = {
      'x-slack-signature': FORGED,
      'x-slack-request-timestamp': `${NOW}`,
      'transfer-encoding': 'chunked',
    };
    const chunk = (size: number) => `${size.toString(16)}\r\n${'x'.repeat(size)}\r\n`;
    // 1 MiB + 64 KiB sent, the body not ended: the client then stalls.
    const c = client(port, eventsHead(headers), ...Array.from({ length: 17 }, () => chunk(64 * 1024)));
    const answer = await c.closed;
    expect(answer.status).toBe(413);
    expect(answer.closedMs).toBeLessThan(1000);
    expect(logs.lines.map((l) => [l.status, l.reason])).toEqual([[413, 'body_too_large']]);
    expect(c.socket.write(chunk(10))).toBe(false); // the server is gone: nothing more is read
  });
});

describe('slow or stalled requests', () => {
  it('are answered 408 and closed within 7 s on every route: stalled headers, a stalled body, an idle connection', async () => {
    const port = await serve();
    const signed = { 'x-slack-signature': FORGED, 'x-slack-request-timestamp': `${NOW}` };
    const stalled = [
      client(port, 'GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n'),
      client(port, 'GET /slack/install HTTP/1.1\r\nhost: 127.0.0.1\r\nuser-agent: slow'),
      client(port, eventsHead({ ...signed, 'content-length': '100' }), '{"type":"ev'),
      client(port),
    ];
    const answers = await Promise.all(stalled.map((c) => c.closed));
    for (const a of answers) {
      expect(a.status).toBe(408);
      expect(a.closedMs).toBeLessThan(7000);
    }
    expect(logs.lines.map((l) => l.reason)).toEqual(['body_not_received']);
  }, 10_000);
});

/**
 * The largest request this bot can be sent, by the reckoning in docs/slack.md#request-limits: a
 * message shortcut on a message of 40,000 characters (where Slack cuts a message's text), carried
 * twice (`text` and its rich-text block) plus 13,000 characters of other blocks, every character
 * one that takes 3 bytes in UTF-8 and so 9 once form-encoded.
 */
function largestMessageShortcut(): string {
  const text = '支'.repeat(40_000);
  const sections = Array.from({ length: 5 }, () => ({
    type: 'section',
    text: { type: 'mrkdwn', text: '払'.repeat(2600) },
  }));
  const payload = {
    type: 'message_action',
    callback_id: 'check_payment',
    trigger_id: '13345224609.738474920.8088930838d88f008e0',
    response_url: 'https://hooks.slack.test/actions/T0HOME/1/abc',
    team: { id: 'T0HOME', domain: 'home' },
    user: { id: 'U0ASKER', team_id: 'T0HOME', name: 'asker' },
    channel: { id: 'C0SUPPORT', name: 'support' },
    message_ts: '1700000000.000100',
    message: {
      type: 'message',
      user: 'U0WRITER',
      ts: '1700000000.000100',
      text,
      blocks: [
        {
          type: 'rich_text',
          block_id: 'b0',
          elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text }] }],
        },
        ...sections,
      ],
    },
  };
  return `payload=${encodeURIComponent(JSON.stringify(payload))}`;
}

describe('Slack’s own requests', () => {
  it('takes the largest one it can send: a message shortcut on a 40,000-character message', async () => {
    const port = await serve();
    const body = largestMessageShortcut();
    expect(Buffer.byteLength(body)).toBeGreaterThan(800_000);
    const response = await fetch(`http://127.0.0.1:${port}/slack/events`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...signatureHeaders(SECRET, body, { timestamp: NOW }),
      },
      body,
    });
    expect(response.status).toBe(200);
    expect(events[0]?.body).toMatchObject({ type: 'message_action', callback_id: 'check_payment' });
  });
});
