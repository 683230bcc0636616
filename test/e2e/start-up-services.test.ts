import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/server.js';
import { startSlackStandIn } from '../support/slack-stand-in.js';
import { botEnv, HOME_TEAM, SECRETS, type Stack, startBot, startStack } from './harness.js';

/**
 * The services the bot needs, as the built bot says at start what is wrong with them: a payment
 * key the service refuses or a service it cannot reach, in one warning line naming the setting
 * (the bot runs on, /healthz 200); an app-level token Slack refuses, by name, and a stop; Slack
 * not answering Socket Mode's connection, said and tried again, /healthz answering meanwhile.
 */

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The warning lines that name a setting (the payments client's own retry lines aside). */
const warnings = (s: Stack) => s.bot.logs().filter((l) => l.level === 'warn' && l.setting !== undefined);

describe('the payment service, checked once started (one workspace)', () => {
  it('says in one warning line that the service rejected PAYMENT_API_KEY, and runs on', async () => {
    stack = await startStack({ env: { PAYMENT_API_KEY: 'not-the-key-of-any-project' } });
    const running = stack;
    await expect.poll(() => warnings(running).length).toBe(1);
    expect(warnings(running)[0]).toMatchObject({
      setting: 'PAYMENT_API_KEY',
      msg: 'the payment service rejected PAYMENT_API_KEY: /balance, /invoice, watches and feeds fail until it is fixed; set the API key of an active project (README → Configuration)',
    });
    expect((await fetch(`${running.bot.url}/healthz`)).status).toBe(200);
    expect(running.bot.output.join('\n')).not.toContain('not-the-key-of-any-project');
  });

  it('says in one warning line that PAYMENT_API_URL could not be reached, and runs on', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    stack = await startStack({ env: { PAYMENT_API_URL: closed } });
    const running = stack;
    await expect.poll(() => warnings(running).length, { timeout: 15_000 }).toBe(1);
    expect(warnings(running)[0]).toMatchObject({ setting: 'PAYMENT_API_URL', paymentApiUrl: closed });
    expect(String(warnings(running)[0]?.msg)).toMatch(
      /^could not reach the payment service at PAYMENT_API_URL \(.+\): check PAYMENT_API_URL and the network; the bot runs on and uses the service once it answers$/,
    );
    expect((await fetch(`${running.bot.url}/healthz`)).status).toBe(200);
  });

  it('says the key works when it does, and warns of nothing', async () => {
    stack = await startStack();
    const running = stack;
    await expect
      .poll(() => running.bot.logs().some((l) => l.msg === 'the payment service accepts PAYMENT_API_KEY'))
      .toBe(true);
    expect(warnings(running)).toEqual([]);
  });
});

describe('Socket Mode’s connection at start', () => {
  it('stops with exit 1 naming SLACK_APP_TOKEN when Slack says the token was revoked', async () => {
    const sandbox = await startSandbox();
    const slack = await startSlackStandIn({
      teamId: HOME_TEAM,
      botToken: SECRETS.botToken,
      appToken: SECRETS.appToken,
    });
    slack.answerNext('apps.connections.open', { ok: false, error: 'token_revoked' }, { times: 100 });
    try {
      const bot = await startBot(botEnv(sandbox, slack.apiUrl, { socketMode: true }), { expectExit: true });
      expect(await bot.exited).toBe(1);
      const fatal = bot.logs().find((l) => l.level === 'fatal');
      expect(fatal?.msg).toBe(
        'could not start: Slack rejected SLACK_APP_TOKEN (token_revoked); generate an app-level token with connections:write under Basic Information',
      );
      expect(fatal).not.toHaveProperty('err');
      expect(bot.output.join('\n')).not.toContain(SECRETS.appToken);
    } finally {
      await slack.close();
      await sandbox.close();
    }
  });

  it('says Slack failed, tries again with /healthz answering meanwhile, and starts once Slack answers', async () => {
    const sandbox = await startSandbox();
    const slack = await startSlackStandIn({
      teamId: HOME_TEAM,
      botToken: SECRETS.botToken,
      appToken: SECRETS.appToken,
    });
    // Three answers make one failed attempt: the SDK's call and its own two retries.
    slack.answerNext('apps.connections.open', { ok: false }, { status: 503, times: 6 });
    const port = await freePort();
    const env = { ...botEnv(sandbox, slack.apiUrl, { socketMode: true }), PORT: String(port) };
    const bot = await startBot(env, { expectExit: true });
    try {
      const retries = () =>
        bot.logs().filter((l) => String(l.msg).startsWith('Socket Mode could not connect'));
      await expect.poll(() => retries().length, { timeout: 15_000 }).toBe(1);
      expect(retries()[0]?.msg).toBe(
        `Socket Mode could not connect: Slack answered HTTP 503 to apps.connections.open at ${slack.apiUrl}. Trying again in 1 s`,
      );
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      await expect
        .poll(() => bot.logs().some((l) => l.msg === 'bot started'), { timeout: 15_000 })
        .toBe(true);
      expect(retries().map((l) => l.msg)).toEqual([
        expect.stringMatching(/Trying again in 1 s$/),
        expect.stringMatching(/Trying again in 2 s$/),
      ]);
      await slack.socket.connected();
    } finally {
      expect((await bot.stop('SIGTERM')).code).toBe(0);
      await slack.close();
      await sandbox.close();
    }
  });
});
