import { describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import { SECRETS } from './harness.js';
import { useStack } from './use-stack.js';

/**
 * Socket Mode, the manifest's default: the Web API stand-in hands out the ws:// URL of a local
 * server that speaks Slack's protocol (`hello`, then envelopes), and the bot acks each envelope.
 */

const stack = useStack({ socketMode: true });

const slashCommand = (command: string, text: string, responseUrl: string, teamId = 'T0HOME') => ({
  token: 'deprecated-verification-token',
  team_id: teamId,
  team_domain: 'home',
  channel_id: 'C0SUPPORT',
  channel_name: 'support',
  user_id: 'U0ASKER',
  user_name: 'asker',
  command,
  text,
  api_app_id: 'A0APP',
  is_enterprise_install: 'false',
  response_url: responseUrl,
  trigger_id: '1.2.3',
});

describe('Socket Mode', () => {
  it('connects through apps.connections.open with the app-level token', () => {
    expect(stack.slack.calls.some((c) => c.method === 'apps.connections.open')).toBe(true);
  });

  it('acks a slash command envelope with the reply in its payload', async () => {
    const ack = await stack.slack.socket.send(
      'slash_commands',
      slashCommand('/balance', '', stack.slack.responseUrl()),
    );
    expect(ack.ms).toBeLessThan(3000);
    expect(ack.payload).toMatchObject({ response_type: 'ephemeral' });
    expect(visibleText(ack.payload)).toContain('0.0123456 BTC');
  });

  it('acks an empty envelope in time when the service is slow, then answers via response_url', async () => {
    stack.sandbox.setLatency(2200);
    const responseUrl = stack.slack.responseUrl();
    const ack = await stack.slack.socket.send(
      'slash_commands',
      slashCommand('/invoice', DEMO_INVOICE_IDS.open, responseUrl),
    );
    expect(ack.ms).toBeLessThan(2200);
    expect(ack.payload ?? {}).toEqual({});
    const { body } = await stack.slack.waitForPost(responseUrl);
    expect(body.response_type).toBe('in_channel');
    expect(visibleText(body)).toContain('Order #1042');
  });

  it('sends the reply through the response_url when the connection closes before the ack', async () => {
    stack.sandbox.setLatency(200);
    const responseUrl = stack.slack.responseUrl();
    stack.slack.socket.sendAndClose('slash_commands', slashCommand('/balance', '', responseUrl));
    const { body } = await stack.slack.waitForPost(responseUrl);
    expect(body.response_type).toBe('ephemeral');
    expect(visibleText(body)).toContain('0.0123456 BTC');
    await stack.slack.socket.connected(); // and it reconnects
  });

  it('refuses /balance to another workspace over Socket Mode too', async () => {
    const ack = await stack.slack.socket.send(
      'slash_commands',
      slashCommand('/balance', '', stack.slack.responseUrl(), 'T0GUEST'),
    );
    expect(visibleText(ack.payload)).toContain('only for members of this workspace');
    expect(stack.sandbox.requests).toHaveLength(0);
  });

  it('serves /healthz and /metrics on PORT', async () => {
    expect((await fetch(`${stack.bot.url}/healthz`)).status).toBe(200);
    const metrics = await fetch(`${stack.bot.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(
      /slackbot_requests_total\{kind="command",name="\/balance",outcome="ok"\} \d+/,
    );
  });

  it('never logs the app-level token', () => {
    expect(stack.bot.output.join('\n')).not.toContain(SECRETS.appToken);
    expect(stack.bot.output.join('\n')).not.toContain(SECRETS.botToken);
  });

  it('disconnects and exits 0 on SIGTERM', async () => {
    const { code, ms } = await stack.bot.stop('SIGTERM');
    expect(code).toBe(0);
    expect(ms).toBeLessThan(10_000);
  });
});
