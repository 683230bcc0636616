import { request } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type PageServer, startPageServer } from '../../src/demo/server.js';
import { type DemoSlack, startDemoSlack } from '../../src/demo/slack.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';

/** The demo page's server on port 0, with the sandbox and the demo's Slack, no bot. */

let sandbox: Sandbox;
let slack: DemoSlack;
let page: PageServer;

beforeEach(async () => {
  sandbox = await startSandbox();
  slack = await startDemoSlack({ unfurlHosts: [] });
  page = await startPageServer({ host: '127.0.0.1', port: 0, slack, sandbox });
});

afterEach(async () => {
  await page.close();
  await slack.close();
  await sandbox.close();
});

const post = (path: string, body: unknown, contentType = 'application/json') =>
  fetch(new URL(path, page.url), {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: JSON.stringify(body),
  });

const state = async () =>
  (await (await fetch(new URL('/demo/state', page.url))).json()) as {
    version: number;
    ready: boolean;
    feed: string;
    home: string | null;
    panel: string;
  };

/** A GET with a chosen Host header (fetch will not send one of its own choosing). */
function getWithHost(path: string, host: string): Promise<number> {
  const { port } = new URL(page.url);
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    })
      .on('error', reject)
      .end();
  });
}

describe('the demo page’s server', () => {
  it('serves the page, its style and script from itself, under a policy that allows nothing else', async () => {
    for (const path of ['/', '/demo.css', '/demo.js']) {
      const response = await fetch(new URL(path, page.url));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    }
    const html = await (await fetch(page.url)).text();
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(html).toContain(`/invoice ${DEMO_INVOICE_IDS.open}`);
  });

  it('answers loopback names only, so a page elsewhere pointed at 127.0.0.1 gets nothing', async () => {
    expect(await getWithHost('/demo/state', new URL(page.url).host)).toBe(200);
    expect(await getWithHost('/demo/state', `localhost:${new URL(page.url).port}`)).toBe(200);
    expect(await getWithHost('/demo/state', 'attacker.example')).toBe(403);
  });

  it('takes actions as JSON only, which a form elsewhere cannot send', async () => {
    expect((await post('/demo/say', { text: '/balance' }, 'text/plain')).status).toBe(400);
    expect((await post('/demo/say', {})).status).toBe(400);
    expect((await post('/demo/say', { text: '/weather' })).status).toBe(204);
    expect((await state()).feed).toContain('is not a valid command');
  });

  it('marks an invoice paid or expired on the sandbox, as the customer or time would, and shows it', async () => {
    const before = (await state()).version;
    expect((await post('/demo/invoice', { id: DEMO_INVOICE_IDS.open, change: 'paid' })).status).toBe(204);
    expect(sandbox.current.find((i) => i.id === DEMO_INVOICE_IDS.open)).toMatchObject({
      payStatus: 'paid',
      status: 'closed',
    });
    // Its 149.99 USDT arrived as USDT-TRC20, as the real service's balance would grow.
    expect(sandbox.balances.find((b) => b.id === 'USDT-TRC20')?.balance.toString()).toBe('1670.49');
    // Paid once: the panel offers it no more, and the page refuses it again.
    expect((await post('/demo/invoice', { id: DEMO_INVOICE_IDS.open, change: 'paid' })).status).toBe(400);
    expect((await post('/demo/invoice', { id: DEMO_INVOICE_IDS.open, change: 'expired' })).status).toBe(204);
    const expired = sandbox.current.find((i) => i.id === DEMO_INVOICE_IDS.open);
    expect(expired?.status).toBe('expired');
    expect(Date.parse(expired?.timeout ?? '')).toBeLessThanOrEqual(Date.now());
    const after = await state();
    expect(after.version).toBeGreaterThan(before);
    expect(after.panel).toContain('expired · paid');
    expect((await post('/demo/invoice', { id: 'nope', change: 'paid' })).status).toBe(400);
    expect((await post('/demo/invoice', { id: DEMO_INVOICE_IDS.open, change: 'refunded' })).status).toBe(400);

    expect((await post('/demo/reset', {})).status).toBe(204);
    expect(sandbox.current.find((i) => i.id === DEMO_INVOICE_IDS.open)?.payStatus).toBe('none');
  });

  it('sets a balance to exactly the digits given, and refuses anything but a decimal', async () => {
    expect((await post('/demo/balance', { id: 'BTC', balance: '0.00000012345678901234' })).status).toBe(204);
    expect(sandbox.balances.find((b) => b.id === 'BTC')?.balance.toString()).toBe('0.00000012345678901234');
    for (const balance of ['1e5', '-1', '0x10', '']) {
      const response = await post('/demo/balance', { id: 'BTC', balance });
      expect(response.status).toBe(400);
      expect(await response.text()).toBe('digits, with a point for a fraction: 12.5');
    }
    expect((await post('/demo/balance', { id: 'XYZ', balance: '1' })).status).toBe(400);
  });
});
