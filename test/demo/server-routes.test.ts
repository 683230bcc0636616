import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type PageServer, startPageServer } from '../../src/demo/server.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { type FakeSlack, fakeSlack, rawRequest } from '../support/demo-page-fakes.js';

/** The demo page's server on port 0 in front of a recording stand-in for the demo's Slack. */

let sandbox: Sandbox;
let slack: FakeSlack;
let page: PageServer;

beforeEach(async () => {
  sandbox = await startSandbox();
  slack = fakeSlack();
  page = await startPageServer({ host: '127.0.0.1', port: 0, slack, sandbox });
});

afterEach(async () => {
  vi.restoreAllMocks();
  await page.close();
  await sandbox.close();
});

const SECURITY = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

const send = (method: string, path: string, body?: string, contentType = 'application/json') =>
  rawRequest(page.url, { method, path, host: new URL(page.url).host, contentType, body });
const post = (path: string, body: unknown) => send('POST', path, JSON.stringify(body));

describe('what the demo page’s server answers', () => {
  it('the page, its style and script, each with its type and the security headers', async () => {
    const types = {
      '/': 'text/html; charset=utf-8',
      '/demo.css': 'text/css; charset=utf-8',
      '/demo.js': 'text/javascript; charset=utf-8',
    };
    for (const [path, type] of Object.entries(types)) {
      const answer = await send('GET', path);
      expect(answer.status).toBe(200);
      expect(answer.headers).toMatchObject({ ...SECURITY, 'content-type': type });
    }
  });

  it('the state as JSON: not ready, nothing in the channel, no App Home until the bot publishes one', async () => {
    const answer = await send('GET', '/demo/state?x=1');
    expect(answer.status).toBe(200);
    expect(answer.headers).toMatchObject({ ...SECURITY, 'content-type': 'application/json; charset=utf-8' });
    expect(JSON.parse(answer.body)).toMatchObject({ version: 0, ready: false, home: null });

    slack.ready = true;
    slack.home = [{ type: 'section', text: { type: 'mrkdwn', text: 'Watching *two* invoices' } }];
    slack.change();
    const after = JSON.parse((await send('GET', '/demo/state')).body);
    expect(after).toMatchObject({ version: 1, ready: true });
    expect(after.home).toContain('Watching');
    expect(after.home).toContain('two');
  });

  it('not found, as plain text, for another path or another method', async () => {
    for (const [method, path] of [
      ['GET', '/nope'],
      ['POST', '/'],
      ['POST', '/demo/state'],
      ['POST', '/demo/events'],
      ['GET', '/demo/say'],
      ['GET', '/demo/reset'],
      ['POST', '/nope'],
    ] as const) {
      const answer = await send(method, path, method === 'POST' ? '{}' : undefined);
      expect({ method, path, status: answer.status, body: answer.body }).toEqual({
        method,
        path,
        status: 404,
        body: 'not found',
      });
      expect(answer.headers).toMatchObject({ ...SECURITY, 'content-type': 'text/plain; charset=utf-8' });
    }
    expect(slack.calls).toEqual([]);
    expect(sandbox.current.map((i) => i.status)).toEqual(['open', 'closed', 'expired']);
  });

  it('on loopback, a loopback name in any case or form; anything else is sent to the page’s address', async () => {
    const { port } = new URL(page.url);
    for (const host of [`LOCALHOST:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'localhost']) {
      expect({ host, status: (await rawRequest(page.url, { path: '/', host })).status }).toEqual({
        host,
        status: 200,
      });
    }
    for (const host of ['attacker.example', `[::2]:${port}`, `:${port}`]) {
      const answer = await rawRequest(page.url, { path: '/demo/state', host });
      expect({ host, status: answer.status, body: answer.body }).toEqual({
        host,
        status: 403,
        body: `Open ${page.url}`,
      });
      expect(answer.headers).toMatchObject({ ...SECURITY, 'content-type': 'text/plain; charset=utf-8' });
    }
  });
});

describe('what the page sends, as JSON only', () => {
  it('refuses what is not JSON, not an object, or too large, saying why', async () => {
    const cases: [string | undefined, string, string][] = [
      [undefined, '{"text":"/balance"}', 'send JSON'],
      ['text/plain', '{"text":"/balance"}', 'send JSON'],
      ['text/plain; a=application/json', '{"text":"/balance"}', 'send JSON'],
      ['application/json', '{"text":', 'not JSON'],
      ['application/json', '[{"text":"/balance"}]', 'not an object'],
      ['application/json', 'null', 'not an object'],
      ['application/json', '"/balance"', 'not an object'],
      ['application/json', '7', 'not an object'],
      ['application/json', '{"text":7}', 'text is missing'],
      ['application/json', JSON.stringify({ text: 'x'.repeat(64 * 1024) }), 'too large'],
    ];
    for (const [contentType, body, why] of cases) {
      const answer = await rawRequest(page.url, {
        method: 'POST',
        path: '/demo/say',
        host: new URL(page.url).host,
        contentType,
        body,
      });
      expect({ contentType, body: body.slice(0, 30), status: answer.status, why: answer.body }).toEqual({
        contentType,
        body: body.slice(0, 30),
        status: 400,
        why,
      });
      expect(answer.headers).toMatchObject({ ...SECURITY, 'content-type': 'text/plain; charset=utf-8' });
    }
    expect(slack.calls).toEqual([]);
  });

  it('takes JSON with a charset, an empty body as {}, and a body of exactly 64 KiB', async () => {
    const said = 'y'.repeat(64 * 1024 - '{"text":""}'.length);
    const answer = await send(
      'POST',
      '/demo/say',
      JSON.stringify({ text: said }),
      'application/json; charset=utf-8',
    );
    expect(answer.status).toBe(204);
    expect(answer.headers).toMatchObject(SECURITY);
    expect((await send('POST', '/demo/home', '')).status).toBe(204);
    expect(slack.calls).toEqual([['say', said], ['openHome']]);
  });

  it('hands a click, a shortcut and the App Home to the demo’s Slack, with where each happened', async () => {
    expect((await post('/demo/click', { place: 'home', blockId: 'b', actionId: 'stop' })).status).toBe(204);
    expect(
      (await post('/demo/click', { place: 'message', ts: '1.2', blockId: 7, actionId: 'a' })).status,
    ).toBe(204);
    expect((await post('/demo/click', { place: 'unfurl', ts: '3.4', actionId: 'u' })).status).toBe(204);
    expect((await post('/demo/shortcut', { ts: '5.6' })).status).toBe(204);
    expect((await post('/demo/home', {})).status).toBe(204);
    expect(slack.calls).toEqual([
      ['click', { kind: 'home' }, 'b', 'stop'],
      ['click', { kind: 'message', ts: '1.2' }, '', 'a'],
      ['click', { kind: 'unfurl', ts: '3.4' }, '', 'u'],
      ['shortcut', '5.6'],
      ['openHome'],
    ]);
  });

  it('refuses a click or shortcut missing where it happened, naming what is missing', async () => {
    const cases: [string, unknown, string][] = [
      ['/demo/click', { actionId: 'a' }, 'place is missing'],
      ['/demo/click', { place: 'sidebar', ts: '1.2', actionId: 'a' }, 'unknown place'],
      ['/demo/click', { place: 'message', actionId: 'a' }, 'ts is missing'],
      ['/demo/click', { place: 'unfurl', actionId: 'a' }, 'ts is missing'],
      ['/demo/click', { place: 'home' }, 'actionId is missing'],
      ['/demo/shortcut', {}, 'ts is missing'],
    ];
    for (const [path, body, why] of cases) {
      const answer = await post(path, body);
      expect({ path, body, status: answer.status, why: answer.body }).toEqual({
        path,
        body,
        status: 400,
        why,
      });
    }
    expect(slack.calls).toEqual([]);
  });

  it('answers 500 when the demo’s Slack fails, and says so on the console', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    slack.failNext = new Error('bot gone');
    const answer = await post('/demo/say', { text: '/balance' });
    expect(answer.status).toBe(500);
    expect(answer.body).toBe('');
    expect(logged).toHaveBeenCalledWith(
      'demo page: POST /demo/say failed:',
      expect.objectContaining({ message: 'bot gone' }),
    );
    expect((await post('/demo/say', { text: '/balance' })).status).toBe(204);
  });
});

describe('the side panel’s changes to the sandbox', () => {
  it('refuses an unknown invoice or change, and an unknown currency, saying so', async () => {
    expect((await post('/demo/invoice', { id: 'nope', change: 'paid' })).body).toBe(
      'no such invoice or change',
    );
    expect((await post('/demo/balance', { id: 'XYZ', balance: '1' })).body).toBe('no such currency');
  });

  it('sets one balance, from digits with or without a fraction and spaces around, and no other', async () => {
    const before = sandbox.balances.map((b) => [b.id, b.balance.toString()]);
    expect((await post('/demo/balance', { id: 'ETC', balance: ' 12 ' })).status).toBe(204);
    expect((await post('/demo/balance', { id: 'DOGE', balance: '4200.5' })).status).toBe(204);
    expect((await post('/demo/balance', { id: 'ETH', balance: '1.' })).status).toBe(400);
    const after = sandbox.balances.map((b) => [b.id, b.balance.toString()]);
    expect(after).toEqual(
      before.map(([id, balance]) => [id, id === 'ETC' ? '12' : id === 'DOGE' ? '4200.5' : balance]),
    );
  });
});
