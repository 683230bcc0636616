import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type DemoSlack, startDemoSlack } from '../../src/demo/slack.js';
import { api, post } from '../support/demo-slack-api.js';

/**
 * The demo Slack's HTTP side as the bot meets it: which addresses answer, how bodies are read
 * and refused, the response_urls' addresses, and what the page sees through the handle.
 */

const MAX_BODY_BYTES = 1024 * 1024;

let slack: DemoSlack;
let bot: Server;
/** The forms and events the stand-in bot received, parsed. */
const received: URLSearchParams[] = [];

beforeEach(async () => {
  received.length = 0;
  slack = await startDemoSlack({ unfurlHosts: [] });
  bot = createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    received.push(new URLSearchParams(raw));
    res.writeHead(200).end();
  });
  bot.listen(0, '127.0.0.1');
  await once(bot, 'listening');
  slack.connect(`http://127.0.0.1:${(bot.address() as AddressInfo).port}/slack/events`);
});

afterEach(async () => {
  bot.closeAllConnections();
  bot.close();
  await slack.close();
});

const base = () => new URL(slack.apiUrl).origin;

interface Raw {
  status: number;
  contentType: string | undefined;
  body: string;
}

/** A request with exactly these headers (fetch would add a content-type); any failure is an error. */
function raw(
  method: string,
  url: string,
  body: string | Buffer = '',
  headers: Record<string, string> = {},
): Promise<Raw | 'error'> {
  return new Promise((resolve) => {
    const req = request(
      url,
      { method, headers: { 'content-length': Buffer.byteLength(body), ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body: text }),
        );
        res.on('error', () => resolve('error'));
      },
    );
    req.setTimeout(5000, () => req.destroy());
    req.on('error', () => resolve('error'));
    req.end(body);
  });
}

const auth = () => ({ authorization: `Bearer ${slack.botToken}` });

/** A response_url the bot got with a slash command. */
async function responseUrl(): Promise<string> {
  await slack.say('/balance');
  const url = received[0]?.get('response_url');
  if (!url) throw new Error('no response_url');
  return url;
}

describe('the Web API under apiUrl', () => {
  it('answers JSON, as Slack does, and names unknown methods', async () => {
    const answer = await raw('POST', `${slack.apiUrl}auth.test`, '{}', {
      ...auth(),
      'content-type': 'application/json',
    });
    expect(answer).toMatchObject({ status: 200, contentType: 'application/json; charset=utf-8' });
    expect(JSON.parse((answer as Raw).body)).toMatchObject({ ok: true, user_id: 'U0BOT' });
    expect(await api(slack, 'chat.fly', {})).toEqual({ ok: false, error: 'unknown_method' });
  });

  it('takes only POSTs', async () => {
    expect(await raw('GET', `${slack.apiUrl}auth.test`, '', auth())).toMatchObject({ status: 404 });
  });

  it('reads a body without a content type as a form', async () => {
    const answer = await raw(
      'POST',
      `${slack.apiUrl}chat.postMessage`,
      'channel=C0PAYMENTS&text=plain',
      auth(),
    );
    expect(answer).toMatchObject({ status: 200 });
    expect(JSON.parse((answer as Raw).body)).toMatchObject({ ok: true });
    expect(slack.messages.map((m) => m.text)).toEqual(['plain']);
  });

  it('refuses a body that does not parse as an invalid payload', async () => {
    const answer = await raw('POST', `${slack.apiUrl}chat.postMessage`, '{"channel":', {
      ...auth(),
      'content-type': 'application/json',
    });
    expect(answer).toEqual({ status: 400, contentType: undefined, body: 'invalid_payload' });
  });

  it('takes a body of up to 1 MiB, no more', async () => {
    const shell = Buffer.byteLength(JSON.stringify({ channel: 'C0PAYMENTS', text: '' }));
    const json = (size: number) => JSON.stringify({ channel: 'C0PAYMENTS', text: 'x'.repeat(size - shell) });
    const headers = { ...auth(), 'content-type': 'application/json' };
    const full = await raw('POST', `${slack.apiUrl}chat.postMessage`, json(MAX_BODY_BYTES), headers);
    expect(full).toMatchObject({ status: 200 });
    expect(slack.messages[0]?.text).toHaveLength(MAX_BODY_BYTES - shell);
    const over = await raw('POST', `${slack.apiUrl}chat.postMessage`, json(MAX_BODY_BYTES + 1), headers);
    expect(over === 'error' || over.status === 400).toBe(true);
    expect(slack.messages).toHaveLength(1);
  });

  /** An address of this machine's that is not loopback, if it has one. */
  const external = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal);

  it.skipIf(!external)('listens on loopback only', async () => {
    if (!external) return;
    const port = new URL(slack.apiUrl).port;
    expect(await raw('POST', `http://${external.address}:${port}/api/auth.test`, '{}', auth())).toBe('error');
  });
});

describe('response_urls', () => {
  it('takes a post at the exact address only', async () => {
    const url = new URL(await responseUrl());
    const id = url.pathname.split('/').at(-1);
    expect(url.pathname).toBe(`/response/${id}`);
    const body = JSON.stringify({ text: 'reply' });
    for (const path of [`/x/response/${id}`, `/response/${id}/x`, `/response/${id}x`, '/nowhere', '/'])
      expect({ path, answer: await raw('POST', `${base()}${path}`, body) }).toMatchObject({
        path,
        answer: { status: 404 },
      });
    expect(await raw('GET', url.href)).toMatchObject({ status: 404 });
    expect(slack.messages.map((m) => m.text)).toEqual(['/balance']);
    expect(await raw('POST', url.href, body)).toMatchObject({ status: 200, body: 'ok' });
    expect(slack.messages.map((m) => m.text)).toEqual(['/balance', 'reply']);
  });

  it('answers 404 for an unknown one, and 400 for a body that is not JSON', async () => {
    expect(await raw('POST', `${base()}/response/0123-abcd`, '{}')).toMatchObject({ status: 404 });
    const url = await responseUrl();
    expect(await raw('POST', url, 'not json')).toMatchObject({ status: 400, body: 'invalid_payload' });
  });
});

describe('the handle the demo page holds', () => {
  it('sends the bot requests from the demo app', async () => {
    await slack.say('/balance');
    expect(received[0]?.get('api_app_id')).toBe('A0DEMO');
  });

  it('shows the published App Home', async () => {
    expect(slack.home).toBeUndefined();
    await api(slack, 'views.publish', {
      user_id: 'U0YOU',
      view: { type: 'home', blocks: [{ type: 'divider' }] },
    });
    expect(slack.home).toEqual([{ type: 'divider' }]);
  });

  it('tells listeners of changes until they stop listening', async () => {
    let heard = 0;
    const stop = slack.onChange(() => {
      heard += 1;
    });
    const ts = await post(slack, { text: 'one' });
    expect(heard).toBe(1);
    await api(slack, 'chat.update', { channel: 'C0PAYMENTS', ts, text: 'two' });
    expect(heard).toBe(2);
    stop();
    await post(slack, { text: 'three' });
    expect(heard).toBe(2);
  });

  it('stops answering once closed', async () => {
    const other = await startDemoSlack({ unfurlHosts: [] });
    expect(await api(other, 'auth.test', {})).toMatchObject({ ok: true });
    await other.close();
    await expect(api(other, 'auth.test', {})).rejects.toThrow();
  });
});
