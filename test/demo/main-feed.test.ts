import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { type DemoRun, startDemo, stopDemos, until } from '../support/demo-run.js';

/**
 * The README's promise about the demo's side panel: mark an invoice paid and the payments feed
 * follows. With the real bot (src/main.ts) on the demo, its feed subscribed in the demo channel:
 * Mark paid adds the invoice's amount to the balance of the coin it was paid in, and the feed
 * posts that it was received, digit for digit.
 */

afterEach(stopDemos, 30_000);

const pageUrl = (run: DemoRun) => /Open (\S+) in your browser/.exec(run.logs.join('\n'))?.[1] ?? '';

/** The channel as the page shows it, as text: tags dropped, entities read. */
async function channelText(url: string): Promise<string> {
  const { feed } = (await (await fetch(`${url}demo/state`)).json()) as { feed: string };
  return feed
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
}

const post = (url: string, path: string, body: unknown) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('Mark paid in the demo', () => {
  it('adds exactly the invoice’s amount to its coin’s balance, and the payments feed posts it received', async () => {
    const run = await startDemo({ bot: 'real', reason: 'unconfigured' });
    await until(() => run.logs.some((line) => line.startsWith('The bot is ready')), 60_000);
    const url = pageUrl(run);

    expect((await post(url, 'demo/say', { text: '/balance subscribe' })).status).toBe(204);
    // The feed's first post: the balance it starts from, Tether (TRC-20) at 1520.5, grouped.
    await expect
      .poll(() => channelText(url), { timeout: 30_000, interval: 200 })
      .toMatch(/Tether \(TRC-20\) 1,520\.5 USDT-TRC20 [\s\S]*Starting balance/);

    expect((await post(url, 'demo/invoice', { id: DEMO_INVOICE_IDS.open, change: 'paid' })).status).toBe(204);
    // 149.99 USDT paid as USDT-TRC20: 1520.5 + 149.99, exactly.
    await expect
      .poll(() => channelText(url), { timeout: 30_000, interval: 200 })
      .toContain('Tether (TRC-20) : received +149.99 USDT-TRC20 — balance 1,670.49 USDT-TRC20');
    const text = await channelText(url);
    expect(text.match(/received/g)).toHaveLength(1);
    expect(run.errors.filter((line) => /^bot (error|fatal)/.test(line))).toEqual([]);
  }, 120_000);
});
