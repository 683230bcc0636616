import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ResponseUrls } from '../../src/demo/response-urls.js';
import { BOT_USER, DEMO_USER, Workspace } from '../../src/demo/workspace.js';

/**
 * The demo Slack's response_urls behind a server on port 0 routed as the demo's Slack routes
 * them: what the bot's posts answer, and what they do to the channel.
 */

let workspace: Workspace;
let urls: ResponseUrls;
let server: Server;
/** What `answer` returned, per post. */
const answered: boolean[] = [];
let changes = 0;

beforeEach(async () => {
  answered.length = 0;
  changes = 0;
  workspace = new Workspace();
  workspace.onChange(() => {
    changes += 1;
  });
  server = createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    try {
      const id = (req.url ?? '').slice('/response/'.length);
      const result = urls.answer(id, raw, res);
      answered.push(result);
      if (!result) res.writeHead(404).end('no such url');
    } catch {
      if (!res.headersSent) res.writeHead(400).end('threw');
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  urls = new ResponseUrls(workspace, `http://127.0.0.1:${(server.address() as AddressInfo).port}/response/`);
});

afterEach(async () => {
  vi.restoreAllMocks();
  server.closeAllConnections();
  server.close();
  await once(server, 'close');
});

const post = async (url: string, body: unknown) => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
};

const shown = () => workspace.messages.map((m) => ({ text: m.text, user: m.user }));

describe('a response_url', () => {
  it('is an address under the base, different each time', () => {
    const one = urls.create(undefined, undefined);
    expect(one).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/response\/[0-9a-f-]{36}$/);
    expect(urls.create(undefined, undefined)).not.toBe(one);
  });

  it('posts a reply only you see, in the thread it belongs to, or in the channel when asked', async () => {
    const url = urls.create(undefined, '1.000001');
    expect(await post(url, {})).toEqual({ status: 200, type: 'text/plain', text: 'ok' });
    expect(answered).toEqual([true]);
    expect(workspace.messages[0]).toMatchObject({
      user: BOT_USER,
      text: '',
      blocks: [],
      ephemeral: true,
      threadTs: '1.000001',
    });
    await post(url, {
      text: 'all',
      blocks: [{ type: 'divider' }],
      response_type: 'in_channel',
      thread_ts: '2.000001',
    });
    expect(workspace.messages[1]).toMatchObject({
      text: 'all',
      blocks: [{ type: 'divider' }],
      ephemeral: false,
      threadTs: '2.000001',
    });
    expect(changes).toBe(2);
  });

  it('replaces the message it came from in place, keeping nothing of the old text or blocks', async () => {
    const card = workspace.add({ user: BOT_USER, text: 'card', blocks: [{ type: 'divider' }] });
    workspace.add({ user: DEMO_USER, text: 'other' });
    const url = urls.create(card.ts, undefined);
    changes = 0;
    expect((await post(url, { replace_original: true })).status).toBe(200);
    expect(workspace.messages).toHaveLength(2);
    expect(workspace.messages[0]).toMatchObject({ ts: card.ts, text: '', blocks: [] });
    expect(changes).toBe(1);
    await post(url, { replace_original: true, text: 'v3', blocks: [{ type: 'header' }] });
    expect(workspace.messages[0]).toMatchObject({ ts: card.ts, text: 'v3', blocks: [{ type: 'header' }] });
    expect(shown()).toEqual([
      { text: 'v3', user: BOT_USER },
      { text: 'other', user: DEMO_USER },
    ]);
  });

  it('without replace_original, or with nothing to replace, posts a new message instead', async () => {
    const card = workspace.add({ user: BOT_USER, text: 'card' });
    await post(urls.create(card.ts, undefined), { replace_original: false, text: 'new' });
    await post(urls.create(undefined, undefined), { replace_original: true, text: 'newer' });
    await post(urls.create('9.000009', undefined), { replace_original: true, text: 'newest' });
    expect(shown().map((m) => m.text)).toEqual(['card', 'new', 'newer', 'newest']);
  });

  it('deletes the message it came from, and no other; with nothing to delete, posts nothing', async () => {
    workspace.add({ user: DEMO_USER, text: 'before' });
    const card = workspace.add({ user: BOT_USER, text: 'card' });
    workspace.add({ user: DEMO_USER, text: 'after' });
    changes = 0;
    expect(
      (await post(urls.create(card.ts, undefined), { delete_original: true, text: 'ignored' })).status,
    ).toBe(200);
    expect(shown().map((m) => m.text)).toEqual(['before', 'after']);
    expect(changes).toBe(1);
    expect((await post(urls.create(undefined, undefined), { delete_original: true, text: 'x' })).status).toBe(
      200,
    );
    expect(shown().map((m) => m.text)).toEqual(['before', 'after']);
    // Only `true` deletes.
    await post(urls.create(workspace.messages[0]?.ts, undefined), { delete_original: 'true', text: 'kept' });
    expect(shown().map((m) => m.text)).toEqual(['before', 'after', 'kept']);
  });

  it('refuses a body that is not an object, without using up a post', async () => {
    const url = urls.create(undefined, undefined);
    for (const body of ['[1]', '"text"', 'null']) {
      expect(await post(url, body)).toMatchObject({ status: 400, text: 'invalid_payload' });
    }
    expect(answered).toEqual([true, true, true]);
    expect(workspace.messages).toEqual([]);
    for (let i = 0; i < 5; i += 1) expect((await post(url, { text: `r${i}` })).status).toBe(200);
    expect(workspace.messages).toHaveLength(5);
  });

  it('takes five posts, then answers used_url and posts nothing more', async () => {
    const url = urls.create(undefined, undefined);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await post(url, { text: `r${i}` })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(await post(url, { text: 'late' })).toMatchObject({ status: 404, text: 'used_url' });
    expect(answered).toEqual([true, true, true, true, true, true]);
    expect(workspace.messages).toHaveLength(5);
  });

  it('works for 30 minutes, to the millisecond, and not after', async () => {
    const now = vi.spyOn(Date, 'now');
    now.mockReturnValue(1_700_000_000_000);
    const url = urls.create(undefined, undefined);
    now.mockReturnValue(1_700_000_000_000 + 30 * 60_000);
    expect((await post(url, { text: 'just in time' })).status).toBe(200);
    now.mockReturnValue(1_700_000_000_000 + 30 * 60_000 + 1);
    expect(await post(url, { text: 'late' })).toMatchObject({ status: 404, text: 'used_url' });
    expect(answered).toEqual([true, true]);
    expect(shown().map((m) => m.text)).toEqual(['just in time']);
  });

  it('an unknown one is not answered, for the caller to answer', async () => {
    const untouched = {} as ServerResponse;
    expect(urls.answer('0'.repeat(36), '{}', untouched)).toBe(false);
    expect(untouched).toEqual({});
    expect(
      await post(`${urls.create(undefined, undefined).slice(0, -36)}${'0'.repeat(36)}`, {}),
    ).toMatchObject({
      status: 404,
      text: 'no such url',
    });
    expect(answered).toEqual([false]);
    expect(workspace.messages).toEqual([]);
  });
});
