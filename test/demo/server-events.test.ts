import { type ClientRequest, request } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type PageServer, startPageServer } from '../../src/demo/server.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { type FakeSlack, fakeSlack, rawRequest } from '../support/demo-page-fakes.js';

/** The page's event stream, the address it shows for each host, and its closing. */

let sandbox: Sandbox | undefined;
let page: PageServer | undefined;
const streams: ClientRequest[] = [];

afterEach(async () => {
  for (const stream of streams.splice(0)) stream.destroy();
  vi.useRealTimers();
  await page?.close();
  await sandbox?.close();
  page = undefined;
  sandbox = undefined;
});

async function start(host = '127.0.0.1'): Promise<{ slack: FakeSlack; page: PageServer }> {
  sandbox = await startSandbox();
  const slack = fakeSlack();
  page = await startPageServer({ host, port: 0, slack, sandbox });
  return { slack, page };
}

interface Stream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Everything received so far. */
  text: () => string;
}

/** Opens the event stream as the page does, and keeps it open. */
function openEvents(url: string): Promise<Stream> {
  const { port, host } = new URL(url);
  return new Promise((resolve, reject) => {
    let text = '';
    const req = request({ host: '127.0.0.1', port, path: '/demo/events', headers: { host } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('error', () => {});
      resolve({ status: res.statusCode ?? 0, headers: res.headers, text: () => text });
    });
    req.on('error', reject);
    req.end();
    streams.push(req);
  });
}

const send = (url: string, path: string, body = '{}') =>
  rawRequest(url, { method: 'POST', path, host: new URL(url).host, contentType: 'application/json', body });

describe('the page’s event stream', () => {
  it('starts with the version and how soon to reconnect, then pushes each change to every open page', async () => {
    const { slack, page } = await start();
    const first = await openEvents(page.url);
    expect(first.status).toBe(200);
    expect(first.headers).toMatchObject({
      'content-type': 'text/event-stream',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    });
    expect(first.headers['content-security-policy']).toContain("default-src 'none'");
    await expect.poll(first.text).toBe('retry: 1000\ndata: 0\n\n');

    slack.change();
    const second = await openEvents(page.url);
    await expect.poll(second.text).toBe('retry: 1000\ndata: 1\n\n');
    expect((await send(page.url, '/demo/reset')).status).toBe(204);
    await expect.poll(first.text).toBe('retry: 1000\ndata: 0\n\ndata: 1\n\ndata: 2\n\n');
    await expect.poll(second.text).toBe('retry: 1000\ndata: 1\n\ndata: 2\n\n');
    expect(
      JSON.parse((await rawRequest(page.url, { path: '/demo/state', host: new URL(page.url).host })).body),
    ).toMatchObject({ version: 2 });
  });

  it('each change to the sandbox from the side panel is pushed', async () => {
    const { page } = await start();
    const events = await openEvents(page.url);
    await expect.poll(events.text).toBe('retry: 1000\ndata: 0\n\n');
    expect(
      (await send(page.url, '/demo/invoice', '{"id":"5b8e1f2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b","change":"paid"}'))
        .status,
    ).toBe(204);
    await expect.poll(events.text).toContain('data: 1\n\n');
    expect((await send(page.url, '/demo/balance', '{"id":"BTC","balance":"1"}')).status).toBe(204);
    await expect.poll(events.text).toContain('data: 2\n\n');
  });

  it('keeps an idle stream open with a comment every 25 seconds, and stops when the server closes', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const before = vi.getTimerCount();
    const { page: started } = await start();
    expect(vi.getTimerCount()).toBe(before + 1);
    const events = await openEvents(started.url);
    await expect.poll(events.text).toBe('retry: 1000\ndata: 0\n\n');
    vi.advanceTimersByTime(24_000);
    vi.advanceTimersByTime(1_000);
    await expect.poll(events.text).toBe('retry: 1000\ndata: 0\n\n: ping\n\n');
    await started.close();
    page = undefined;
    expect(vi.getTimerCount()).toBe(before);
  });
});

describe('the address the page server shows', () => {
  it('for a loopback name, itself; for every interface, 127.0.0.1; an IPv6 address in brackets', async () => {
    const loopback = await start('localhost');
    expect(loopback.page.url).toMatch(/^http:\/\/localhost:\d+\/$/);
    await page?.close();
    await sandbox?.close();

    const all = await start('0.0.0.0');
    expect(all.page.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    // Not on loopback only: any name is answered.
    expect((await rawRequest(all.page.url, { path: '/', host: 'demo.lan' })).status).toBe(200);
    await page?.close();
    await sandbox?.close();

    const any6 = await start('::');
    expect(any6.page.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    await page?.close();
    await sandbox?.close();

    const six = await start('::1');
    expect(six.page.url).toMatch(/^http:\/\/\[::1\]:\d+\/$/);
    const { port } = new URL(six.page.url);
    expect((await rawRequest(six.page.url, { path: '/', host: `[::1]:${port}` })).status).toBe(200);
    // ::1 is loopback too: another name gets nothing.
    expect((await rawRequest(six.page.url, { path: '/', host: 'demo.lan' })).status).toBe(403);
  });

  it('once closed, answers nothing', async () => {
    const { page: started } = await start();
    expect((await rawRequest(started.url, { path: '/', host: new URL(started.url).host })).status).toBe(200);
    await started.close();
    page = undefined;
    await expect(rawRequest(started.url, { path: '/', host: new URL(started.url).host })).rejects.toThrow();
  });
});
