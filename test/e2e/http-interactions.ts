import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import {
  blockActionsBody,
  commandBody,
  linkSharedBody,
  type SignOptions,
  signatureHeaders,
} from '../support/slack-requests.js';
import { ACK_DEADLINE_MS, post, stack } from './http-stack.js';

/** The started bot (HTTP mode) answering buttons and link unfurls, and refusing requests Slack did not sign. */

export function buttons(): void {
  describe('buttons', () => {
    it('Refresh acks at once and replaces the message with a fresh read, saying who refreshed it', async () => {
      const responseUrl = stack.slack.responseUrl();
      const ack = await post(
        blockActionsBody({ actionId: 'refresh_invoice', value: DEMO_INVOICE_IDS.paid, responseUrl }),
      );
      expect(ack.status).toBe(200);
      expect(ack.ms).toBeLessThan(ACK_DEADLINE_MS);
      const { body } = await stack.slack.waitForPost(responseUrl);
      expect(body.replace_original).toBe(true);
      expect(visibleText(body)).toContain('Order #1041 — hardware wallet');
      expect(visibleText(body)).toMatch(/refreshed <!date\^\d+\^[^>]+> by <@U0CLICKER>/);
    });

    it('a failed Refresh tells the clicker and leaves the message alone', async () => {
      stack.sandbox.failNext({ kind: 'status', status: 503 }, 3);
      const responseUrl = stack.slack.responseUrl();
      await post(
        blockActionsBody({ actionId: 'refresh_invoice', value: DEMO_INVOICE_IDS.open, responseUrl }),
      );
      const { body } = await stack.slack.waitForPost(responseUrl);
      expect(body).toMatchObject({ replace_original: false, response_type: 'ephemeral' });
      expect(String(body.text)).toMatch(/^Could not refresh the invoice/);
    });

    it.each([
      ['Refresh', 'refresh_invoice'],
      ['Watch', 'watch_invoice'],
    ])(
      '%s carrying a value the bot did not write: "that button no longer works", privately, nothing else done',
      async (_label, actionId) => {
        const marker = `forged-${actionId}-7c2e`;
        const values = [
          42,
          true,
          { id: marker },
          [marker],
          '',
          'w-1',
          `${DEMO_INVOICE_IDS.open} x`,
          undefined,
        ];
        const postsBefore = stack.slack.calls.filter((c) => c.method === 'chat.postMessage').length;
        for (const value of values) {
          const responseUrl = stack.slack.responseUrl();
          const ack = await post(blockActionsBody({ actionId, value, responseUrl }));
          expect(ack.status).toBe(200);
          expect(ack.ms).toBeLessThan(ACK_DEADLINE_MS);
          const { body } = await stack.slack.waitForPost(responseUrl);
          expect(body).toMatchObject({ response_type: 'ephemeral', replace_original: false });
          expect(visibleText(body)).toBe(
            ':warning: *That button no longer works*\nRun `/invoice &lt;id&gt;` again for a fresh card.',
          );
        }
        expect(stack.sandbox.requests).toEqual([]);
        expect(stack.slack.calls.filter((c) => c.method === 'chat.postMessage')).toHaveLength(postsBefore);
        await expect
          .poll(
            () => stack.bot.logs().filter((l) => l.name === actionId && l.outcome === 'stale_button').length,
          )
          .toBe(values.length);
        const warnings = stack.bot
          .logs()
          .filter((l) => l.msg === 'a button value the bot did not write' && l.action === actionId);
        expect(warnings.map((l) => l.level)).toEqual(values.map(() => 'warn'));
        expect(stack.bot.output.join('\n')).not.toContain(marker);
      },
    );

    it('a click on "Open payment page" is acknowledged and nothing is posted', async () => {
      const responseUrl = stack.slack.responseUrl();
      const ack = await post(
        blockActionsBody({ actionId: 'open_payment_page', url: 'https://pay.example/x', responseUrl }),
      );
      expect(ack.status).toBe(200);
      await sleep(200);
      expect(stack.slack.posts.filter((p) => p.url === responseUrl)).toEqual([]);
    });
  });
}

export function linkUnfurls(): void {
  describe('link unfurls', () => {
    it('unfurls a pasted payment link into a compact card, keyed by the exact URL', async () => {
      const before = stack.slack.calls.length;
      const url = `${stack.sandbox.payUrl}/pay/${DEMO_INVOICE_IDS.expired}`;
      const ack = await post(linkSharedBody([url]), { contentType: 'application/json' });
      expect(ack.status).toBe(200);
      const call = await stack.slack.waitForCall('chat.unfurl');
      expect(stack.slack.calls.length).toBeGreaterThan(before);
      expect(call.args).toMatchObject({
        unfurl_id: 'C0SUPPORT.1700000000.000200.abc',
        source: 'conversations_history',
      });
      const unfurls = call.args.unfurls as Record<string, unknown>;
      expect(Object.keys(unfurls)).toEqual([url]);
      // A final invoice: its state in words, no expiry to count down, and no Watch to offer.
      const text = visibleText(unfurls[url]);
      expect(text).toContain('*Order #1039 — gift card*\nExpired · Not paid · 25 USD');
      expect(text).toContain('as sent: status `expired`');
      expect(text).not.toContain('Expiry');
      expect(text).not.toContain('(expired)');
      expect(JSON.stringify(unfurls[url])).not.toContain('watch_invoice');
    });

    it('leaves a link to no invoice, or a malformed one, alone', async () => {
      const unfurlsBefore = stack.slack.calls.filter((c) => c.method === 'chat.unfurl').length;
      const links = [
        `${stack.sandbox.payUrl}/pay/aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee`,
        `${stack.sandbox.payUrl}/pay/%3Cscript%3E`,
      ];
      const ack = await post(linkSharedBody(links), { contentType: 'application/json' });
      expect(ack.status).toBe(200);
      await sleep(500);
      expect(stack.slack.calls.filter((c) => c.method === 'chat.unfurl')).toHaveLength(unfurlsBefore);
      expect(stack.sandbox.requests).toHaveLength(1);
    });
  });
}

export function requestSigning(): void {
  describe('request signing', () => {
    const body = () =>
      commandBody({ command: '/balance', text: '', response_url: stack.slack.responseUrl() });

    it.each<[string, SignOptions]>([
      ['a wrong signature', { signature: `v0=${'0'.repeat(64)}` }],
      ['a malformed signature', { signature: 'v0=deadbeef' }],
      ['a signature made with another secret', { signature: 'other-secret' }],
      ['a timestamp six minutes old', { timestamp: Math.floor(Date.now() / 1000) - 360 }],
      ['a timestamp six minutes in the future', { timestamp: Math.floor(Date.now() / 1000) + 360 }],
      ['no signature', { signature: null }],
    ])('answers %s with 401 and calls nothing', async (_label, opts) => {
      const text = body();
      const signature =
        opts.signature === 'other-secret'
          ? signatureHeaders('not-the-signing-secret', text)['x-slack-signature']
          : opts.signature;
      const result = await post(text, { ...opts, signature });
      expect(result.status).toBe(401);
      await sleep(100);
      expect(stack.sandbox.requests).toHaveLength(0);
    });
  });
}
