import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/server.js';
import { startSlackStandIn } from '../support/slack-stand-in.js';
import { botEnv, HOME_TEAM, SECRETS, type Stack, startBot, startStack } from './harness.js';

/**
 * What an operator reads at start, from the built bot (`node dist/main.js`): which mode runs and
 * why, first; every setting that mode does not read, by name (refused where it can only be a
 * mistake); a port it cannot have, by the setting that chose it.
 */

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** A server holding a port, so that the bot cannot have it. */
async function holdPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, resolve));
  return { port: (server.address() as AddressInfo).port, server };
}

const many = {
  SLACK_CLIENT_ID: '1111.2222',
  SLACK_CLIENT_SECRET: 'a-client-secret-of-this-app',
  SLACK_STATE_SECRET: 'a-state-secret-of-this-app',
  SLACK_SIGNING_SECRET: SECRETS.signingSecret,
  ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
  PAYMENT_API_URL: 'https://api.pay.example',
};

describe('the first lines', () => {
  it('say first which mode runs and why: one workspace over HTTP', async () => {
    stack = await startStack();
    expect(stack.bot.logs()[0]).toMatchObject({
      level: 'info',
      mode: 'http',
      tenancy: 'one',
      msg: 'starting one workspace over HTTP, because SLACK_BOT_TOKEN is set and SLACK_APP_TOKEN is not',
    });
  });

  it('say Socket Mode runs because SLACK_APP_TOKEN is set, and name the signing secret it does not read', async () => {
    stack = await startStack({ socketMode: true, env: { SLACK_SIGNING_SECRET: SECRETS.signingSecret } });
    const [first, second] = stack.bot.logs();
    expect(first).toMatchObject({
      mode: 'socket',
      msg: 'starting one workspace over Socket Mode, because SLACK_APP_TOKEN is set',
    });
    expect(second).toMatchObject({
      level: 'warn',
      setting: 'SLACK_SIGNING_SECRET',
      msg: 'SLACK_SIGNING_SECRET is set, but one workspace over Socket Mode does not read it: unset it; to take Slack’s requests over HTTP instead, unset SLACK_APP_TOKEN',
    });
    expect(stack.bot.output.join('\n')).not.toContain(SECRETS.signingSecret);
  });

  it('refuse a payment key with many workspaces, by name, never its value', async () => {
    const bot = await startBot({ ...many, PAYMENT_API_KEY: 'a-payment-key-value' }, { expectExit: true });
    expect(await bot.exited).toBe(1);
    const output = bot.output.join('\n');
    expect(output).toContain(
      'PAYMENT_API_KEY: is not read with many workspaces (each workspace connects its own payment account on the app’s Home tab): unset it',
    );
    expect(output).not.toContain('a-payment-key-value');
  });
});

describe('a port it cannot have', () => {
  it.each(['PORT', 'METRICS_PORT'])(
    'names %s and what to do, in one line without a stack',
    async (setting) => {
      const held = await holdPort();
      const sandbox = await startSandbox();
      const slack = await startSlackStandIn({ teamId: HOME_TEAM, botToken: SECRETS.botToken });
      try {
        const env = { ...botEnv(sandbox, slack.apiUrl), [setting]: String(held.port) };
        const bot = await startBot(env, { expectExit: true });
        expect(await bot.exited).toBe(1);
        const fatal = bot.logs().find((l) => l.level === 'fatal');
        expect(fatal?.msg).toBe(
          `could not start: ${setting} ${held.port} is already in use: stop whatever listens there, or set ${setting} to a free port`,
        );
        expect(fatal).not.toHaveProperty('err');
        expect(bot.output.join('\n')).not.toMatch(/ {4}at /);
      } finally {
        held.server.close();
        await slack.close();
        await sandbox.close();
      }
    },
  );

  it('refuses METRICS_PORT equal to PORT before starting anything', async () => {
    const bot = await startBot(
      { ...many, PORT: '8080', METRICS_PORT: '8080', DATABASE_URL: 'postgres://bot@127.0.0.1:1/x' },
      { expectExit: true },
    );
    expect(await bot.exited).toBe(1);
    expect(bot.output.join('\n')).toContain(
      'METRICS_PORT: must not be PORT: the two are servers of their own. Choose another port, or unset METRICS_PORT to serve /metrics on PORT',
    );
  });
});

describe('a database that refuses the connection', () => {
  it('is said once, in the message and in the error', async () => {
    const sandbox = await startSandbox();
    const slack = await startSlackStandIn({ teamId: HOME_TEAM, botToken: SECRETS.botToken });
    try {
      const env = { ...botEnv(sandbox, slack.apiUrl), DATABASE_URL: 'postgres://bot@127.0.0.1:1/payments' };
      const bot = await startBot(env, { expectExit: true });
      expect(await bot.exited).toBe(1);
      const fatal = bot.logs().find((l) => l.level === 'fatal') as { msg: string; err: { message: string } };
      expect(fatal.msg.match(/ECONNREFUSED/g)).toHaveLength(1);
      expect(fatal.err.message.match(/ECONNREFUSED/g)).toHaveLength(1);
    } finally {
      await slack.close();
      await sandbox.close();
    }
  });
});
