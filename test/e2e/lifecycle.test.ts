import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { visibleText } from '../support/block-kit.js';
import { commandBody, postToBot } from '../support/slack-requests.js';
import { startSlackStandIn } from '../support/slack-stand-in.js';
import { botEnv, HOME_TEAM, SECRETS, type Stack, startBot, startStack } from './harness.js';

/** Start and stop: a failed start says why and exits non-zero; SIGTERM finishes replies and exits 0. */

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('stopping', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('exits 0 within 10 s on %s', async (signal) => {
    stack = await startStack();
    const { code, ms } = await stack.bot.stop(signal);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(10_000);
    expect(stack.bot.logs().at(-1)).toMatchObject({ msg: 'stopped', drained: true });
  });

  it('finishes a reply in flight before exiting, and takes no new requests', async () => {
    stack = await startStack();
    const { bot, slack, sandbox } = stack;
    sandbox.setLatency(2500);
    const responseUrl = slack.responseUrl();
    const ack = await postToBot(
      `${bot.url}/slack/events`,
      commandBody({ command: '/invoice', text: DEMO_INVOICE_IDS.open, response_url: responseUrl }),
      SECRETS.signingSecret,
    );
    expect(ack.status).toBe(200);
    expect(ack.body).toBe(''); // the reply is still coming, through the response_url

    const stopping = bot.stop('SIGTERM');
    await expect.poll(() => bot.logs().some((l) => String(l.msg).startsWith('stopping'))).toBe(true);
    await expect(fetch(`${bot.url}/healthz`)).rejects.toThrow();

    const { code, ms } = await stopping;
    expect(code).toBe(0);
    expect(ms).toBeLessThan(10_000);
    const reply = slack.posts.find((p) => p.url === responseUrl);
    expect(reply?.body.response_type).toBe('in_channel');
    expect(visibleText(reply?.body)).toContain('Order #1042');
  });
});

describe('stopping while starting', () => {
  it('exits 0 on a SIGTERM that comes before the bot has started', async () => {
    const sandbox = await startSandbox();
    const slack = await startSlackStandIn({
      teamId: HOME_TEAM,
      botToken: SECRETS.botToken,
      authDelayMs: 1500,
    });
    try {
      const bot = await startBot(botEnv(sandbox, slack.apiUrl), { expectExit: true });
      await slack.waitForCall('auth.test');
      bot.child.kill('SIGTERM');
      expect(await bot.exited).toBe(0);
      expect(bot.logs().map((l) => l.msg)).toEqual([
        'starting one workspace over HTTP, because SLACK_BOT_TOKEN is set and SLACK_APP_TOKEN is not',
        'store ready',
        'stopping: no new requests, finishing replies in flight',
        'stopped',
      ]);
    } finally {
      await slack.close();
      await sandbox.close();
    }
  });
});

describe('where it listens', () => {
  it('listens on HOST only', async () => {
    stack = await startStack({ env: { HOST: '127.0.0.1' } });
    expect((await fetch(`http://127.0.0.1:${stack.bot.port}/healthz`)).status).toBe(200);
    const outside = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
    if (outside) await expect(fetch(`http://${outside}:${stack.bot.port}/healthz`)).rejects.toThrow();
  });
});

describe('/metrics on a port of its own', () => {
  it('serves /metrics on METRICS_PORT only, /healthz on both, and stops both', async () => {
    const free = createServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    const metricsPort = (free.address() as AddressInfo).port;
    await new Promise((resolve) => free.close(resolve));
    stack = await startStack({ env: { METRICS_PORT: String(metricsPort) } });
    const publicPort = `http://127.0.0.1:${stack.bot.port}`;
    const operatorPort = `http://127.0.0.1:${metricsPort}`;
    expect((await fetch(`${publicPort}/metrics`)).status).toBe(404);
    const metrics = await fetch(`${operatorPort}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('slackbot_');
    expect((await fetch(`${publicPort}/healthz`)).status).toBe(200);
    expect((await fetch(`${operatorPort}/healthz`)).status).toBe(200);
    expect((await fetch(`${operatorPort}/slack/events`, { method: 'POST' })).status).toBe(404);
    expect((await stack.bot.stop('SIGTERM')).code).toBe(0);
    await expect(fetch(`${operatorPort}/metrics`)).rejects.toThrow();
  });
});

describe('a failed start', () => {
  it('exits 1 naming SLACK_APP_TOKEN when Slack rejects it', async () => {
    const sandbox = await startSandbox();
    const slack = await startSlackStandIn({
      teamId: HOME_TEAM,
      botToken: SECRETS.botToken,
      appToken: 'xapp-another-token-entirely',
    });
    try {
      const bot = await startBot(botEnv(sandbox, slack.apiUrl, { socketMode: true }), { expectExit: true });
      expect(await bot.exited).toBe(1);
      const fatal = bot.logs().find((l) => l.level === 'fatal');
      expect(String(fatal?.msg)).toContain('could not start: Slack rejected SLACK_APP_TOKEN (invalid_auth)');
      expect(bot.output.join('\n')).not.toContain(SECRETS.appToken);
    } finally {
      await slack.close();
      await sandbox.close();
    }
  });

  it('exits 1 naming DATABASE_URL, never its password, when the database cannot be reached', async () => {
    const sandbox = await startSandbox();
    const slack = await startSlackStandIn({ teamId: HOME_TEAM, botToken: SECRETS.botToken });
    try {
      const env = {
        ...botEnv(sandbox, slack.apiUrl),
        DATABASE_URL: 'postgres://bot:db-secret-password@127.0.0.1:1/payments',
      };
      const bot = await startBot(env, { expectExit: true });
      expect(await bot.exited).toBe(1);
      const fatal = bot.logs().find((l) => l.level === 'fatal');
      expect(String(fatal?.msg)).toMatch(
        /^could not start: could not prepare the PostgreSQL at 127\.0\.0\.1:1\/payments named by DATABASE_URL: /,
      );
      expect(bot.output.join('\n')).not.toContain('db-secret-password');
    } finally {
      await slack.close();
      await sandbox.close();
    }
  });

  it('exits 1 naming DATABASE_URL when it is not a database it knows', async () => {
    const bot = await startBot(
      {
        ...botEnv(
          { url: 'http://127.0.0.1:9', apiKey: 'k-12345678', payUrl: 'http://127.0.0.1:9' },
          'http://127.0.0.1:9/api/',
        ),
        DATABASE_URL: 'mysql://db/x',
      },
      { expectExit: true },
    );
    expect(await bot.exited).toBe(1);
    expect(bot.output.join('\n')).toContain(
      'DATABASE_URL: must be postgres://…, postgresql://… or file:<path>',
    );
  });

  it('exits 1 refusing the .env.example placeholders by name', async () => {
    const bot = await startBot(
      {
        SLACK_BOT_TOKEN: 'xoxb-...',
        SLACK_APP_TOKEN: 'xapp-...',
        PAYMENT_API_URL: 'https://api.your-payment-service.example',
        PAYMENT_API_KEY: 'a-real-looking-key',
      },
      { expectExit: true },
    );
    expect(await bot.exited).toBe(1);
    const output = bot.output.join('\n');
    for (const name of ['SLACK_BOT_TOKEN', 'SLACK_APP_TOKEN', 'PAYMENT_API_URL']) {
      expect(output).toContain(`${name}: is still the placeholder from .env.example`);
    }
  });

  it('exits 1 naming SLACK_BOT_TOKEN and SLACK_CLIENT_ID when both modes are set at once', async () => {
    const bot = await startBot(
      {
        SLACK_BOT_TOKEN: SECRETS.botToken,
        SLACK_SIGNING_SECRET: SECRETS.signingSecret,
        SLACK_CLIENT_ID: '1111.2222',
        SLACK_CLIENT_SECRET: 'a-client-secret-of-this-app',
        PAYMENT_API_URL: 'https://api.pay.example',
        PAYMENT_API_KEY: 'a-real-looking-key',
      },
      { expectExit: true },
    );
    expect(await bot.exited).toBe(1);
    expect(bot.output.join('\n')).toContain('SLACK_BOT_TOKEN and SLACK_CLIENT_ID are both set');
    expect(bot.output.join('\n')).not.toContain('a-client-secret-of-this-app');
  });

  it('exits 1 saying Slack could not be reached when nothing answers at SLACK_API_URL', async () => {
    const sandbox = await startSandbox();
    const gone = await startSlackStandIn({ teamId: HOME_TEAM, botToken: SECRETS.botToken });
    await gone.close();
    try {
      const bot = await startBot(botEnv(sandbox, gone.apiUrl), { expectExit: true });
      expect(await bot.exited).toBe(1);
      const fatal = bot.logs().find((l) => l.level === 'fatal');
      expect(String(fatal?.msg)).toContain(`could not start: could not reach Slack at ${gone.apiUrl}`);
    } finally {
      await sandbox.close();
    }
  });

  it('exits 1 naming the missing variables, never their values', async () => {
    const bot = await startBot(
      { SLACK_BOT_TOKEN: SECRETS.botToken, PAYMENT_API_KEY: 'k-secret-value' },
      { expectExit: true },
    );
    expect(await bot.exited).toBe(1);
    const output = bot.output.join('\n');
    expect(output).toContain('PAYMENT_API_URL: is required');
    expect(output).toContain('SLACK_SIGNING_SECRET: is required in HTTP mode');
    expect(output).not.toContain(SECRETS.botToken);
    expect(output).not.toContain('k-secret-value');
  });

  it('exits 1 with a clear message when Slack rejects the bot token', async () => {
    const slack = await startSlackStandIn({ teamId: HOME_TEAM, botToken: 'xoxb-the-right-one' });
    const sandbox = await startSandbox();
    try {
      const bot = await startBot(botEnv(sandbox, slack.apiUrl), { expectExit: true });
      expect(await bot.exited).toBe(1);
      const fatal = bot.logs().find((l) => l.level === 'fatal');
      expect(String(fatal?.msg)).toContain('could not start: Slack rejected SLACK_BOT_TOKEN (invalid_auth)');
      expect(bot.output.join('\n')).not.toContain(SECRETS.botToken);
    } finally {
      await slack.close();
      await sandbox.close();
    }
  });
});
