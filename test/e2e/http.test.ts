import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { blockActionsBody } from '../support/slack-requests.js';
import { SECRETS } from './harness.js';
import { balanceCommand, invoiceCommand } from './http-commands.js';
import { buttons, linkUnfurls, requestSigning } from './http-interactions.js';
import { ackBodies, command, post, stack, useHttpStack } from './http-stack.js';

/**
 * The started bot (HTTP mode), driven the way Slack drives it: signed form posts, real
 * response_urls, a Web API stand-in, and the sandbox payment service with faults on demand.
 * One bot for the file: the commands (http-commands.ts), the buttons, unfurls and signing
 * (http-interactions.ts), then the operations, whose last test looks for secrets in everything
 * the bot said in all of them.
 */

useHttpStack();
balanceCommand();
invoiceCommand();
buttons();
linkUnfurls();
requestSigning();

describe('operations', () => {
  it('answers /healthz once ready', async () => {
    const response = await fetch(`${stack.bot.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });

  it.each([
    ['payload=null', 'application/x-www-form-urlencoded'],
    ['null', 'application/json'],
  ])('answers a signed %s with 400 at once and keeps answering', async (body, contentType) => {
    const result = await post(body, { contentType });
    expect(result.status).toBe(400);
    expect(result.ms).toBeLessThan(1000);
    const { reply } = await command('/balance', '');
    expect(reply.response_type).toBe('ephemeral');
  });

  it('acknowledges a click on a button it no longer knows at once, posting nothing', async () => {
    const responseUrl = stack.slack.responseUrl();
    const ack = await post(blockActionsBody({ actionId: 'approve_refund_v0', value: 'x', responseUrl }));
    expect(ack.status).toBe(200);
    expect(ack.ms).toBeLessThan(1000);
    await sleep(100);
    expect(stack.slack.posts.filter((p) => p.url === responseUrl)).toEqual([]);
    // The bot's log lines come through its stdout pipe, a moment after the ack.
    await expect
      .poll(() =>
        stack.bot
          .logs()
          .filter((l) => l.name === 'approve_refund_v0')
          .map((l) => l.msg),
      )
      .toEqual(['acknowledged a request this app has no listener for']);
  });

  it('survives a request it cannot parse and keeps answering', async () => {
    const garbage = await post('{"type":"event_callback","event":', { contentType: 'application/json' });
    expect(garbage.status).toBeGreaterThanOrEqual(400);
    const { reply } = await command('/balance', '');
    expect(reply.response_type).toBe('ephemeral');
    expect(stack.bot.child.exitCode).toBeNull();
  });

  it('serves Prometheus metrics, unsigned, with labels from a closed set only', async () => {
    await command('/invoice', DEMO_INVOICE_IDS.paid, { user_id: 'U0METRICS' });
    await command('/balance', '', { user_id: 'U0METRICS' });
    const response = await fetch(`${stack.bot.url}/metrics`);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toMatch(/slackbot_requests_total\{kind="command",name="\/invoice",outcome="ok"\} \d+/);
    expect(text).toMatch(
      /slackbot_payment_calls_total\{operation="balance",lane="interactive",result="ok"\} \d+/,
    );
    expect(text).toMatch(/slackbot_request_duration_seconds_count\{kind="command"\} \d+/);
    expect(text).toContain('slackbot_watches_active 0');
    expect(text).toContain('slackbot_inflight');
    // No id, person or free text as a label value.
    expect(text).not.toContain('U0METRICS');
    expect(text).not.toContain(DEMO_INVOICE_IDS.paid);
    expect(text).not.toContain('T0HOME');
  });

  it('logs one JSON line per request with who asked, what, the outcome and the latency', async () => {
    await command('/invoice', DEMO_INVOICE_IDS.open, { user_id: 'U0LOGME' });
    await expect
      .poll(() => stack.bot.logs().find((l) => l.user === 'U0LOGME' && l.kind === 'command'))
      .toMatchObject({
        level: 'info',
        name: '/invoice',
        team: 'T0HOME',
        channel: 'C0SUPPORT',
        invoiceId: DEMO_INVOICE_IDS.open,
        outcome: 'ok',
        delivery: 'ack',
        ms: expect.any(Number),
      });
  });

  it('never lets a secret out: not in logs (at debug level), acks, posts or API calls', () => {
    const everything = [
      ...stack.bot.output,
      ...ackBodies,
      ...stack.slack.posts.map((p) => p.raw),
      ...stack.slack.calls.map((c) => c.raw),
    ].join('\n');
    expect(stack.bot.output.length).toBeGreaterThan(20);
    for (const secret of [stack.sandbox.apiKey, SECRETS.botToken, SECRETS.signingSecret]) {
      expect(everything).not.toContain(secret);
    }
  });
});
