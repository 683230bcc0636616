import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { assembledBot, useAssembledWorld } from './support/assembled-bot.js';
import { captureLogs } from './support/bolt.js';

/**
 * Socket Mode's start (src/http/socket-receiver.ts): an app-level token Slack refuses stops it,
 * naming SLACK_APP_TOKEN and what to do, whatever @slack/socket-mode would have done (it retries
 * `token_revoked` forever); anything else is said and tried again, with /healthz answering.
 */

const BOT_TOKEN = 'xoxb-socket-start-token';
const APP_TOKEN = 'xapp-socket-start-token';
const FIX = 'generate an app-level token with connections:write under Basic Information';

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('Socket Mode’s start', () => {
  const world = useAssembledWorld({ botToken: BOT_TOKEN, appToken: APP_TOKEN });

  async function assembled(appToken = APP_TOKEN) {
    const port = await freePort();
    const config = loadConfig({
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_APP_TOKEN: appToken,
      SLACK_API_URL: world.slack.apiUrl,
      PAYMENT_API_URL: world.sandbox.url,
      PAYMENT_API_KEY: world.sandbox.apiKey,
      PORT: String(port),
      HOST: '127.0.0.1',
    });
    const logs = captureLogs([BOT_TOKEN, appToken, world.sandbox.apiKey]);
    const bot = await assembledBot({
      config,
      store: world.store,
      logger: logs.logger,
      dispatcher: world.pool,
    });
    world.bots.push(bot);
    return { bot, logs, healthz: () => fetch(`http://127.0.0.1:${port}/healthz`) };
  }

  it.each([
    ['invalid_auth', 'which the SDK gives up on'],
    ['token_revoked', 'which the SDK would retry forever'],
    ['not_allowed_token_type', 'which the SDK would retry forever'],
  ])('stops at %s (%s), naming SLACK_APP_TOKEN and what to do', async (code) => {
    const { bot } = await assembled();
    world.slack.answerNext('apps.connections.open', { ok: false, error: code }, { times: 20 });
    const error = await bot.start().catch((e: unknown) => e);
    world.slack.answerNext('apps.connections.open', {}, { times: 0 });
    expect((error as Error).message).toBe(`Slack rejected SLACK_APP_TOKEN (${code}); ${FIX}`);
  });

  it('says an HTTP error from Slack and tries again, /healthz answering meanwhile, until it connects', async () => {
    const { bot, logs, healthz } = await assembled();
    // Three answers: the SDK's own two retries, then its give-up, make one failed attempt.
    world.slack.answerNext('apps.connections.open', { ok: false }, { status: 503, times: 3 });
    const starting = bot.start();
    const ours = () => logs.lines.filter((l) => String(l.msg).startsWith('Socket Mode could not connect'));
    await expect.poll(() => ours().length, { timeout: 10_000 }).toBe(1);
    expect((await healthz()).status).toBe(200);
    expect(ours()[0]?.msg).toBe(
      `Socket Mode could not connect: Slack answered HTTP 503 to apps.connections.open at ${world.slack.apiUrl}. Trying again in 1 s`,
    );
    await starting;
    await world.slack.socket.connected();
    expect(logs.lines.at(-1)).toMatchObject({ msg: 'bot started', mode: 'socket' });
  });

  it('says a refusal that is not the token’s and lets Socket Mode try again', async () => {
    const { bot, logs } = await assembled();
    world.slack.answerNext('apps.connections.open', { ok: false, error: 'internal_error' });
    await bot.start();
    expect(logs.lines.find((l) => l.level === 'error')).toMatchObject({
      error: 'internal_error',
      msg: 'Slack refused to open a Socket Mode connection (internal_error); Socket Mode tries again',
    });
  }, 20_000);

  it('stops at once while it waits to try again', async () => {
    const { bot, logs } = await assembled();
    world.slack.answerNext('apps.connections.open', { ok: false }, { status: 503, times: 100 });
    const starting = bot.start();
    await expect.poll(() => logs.lines.some((l) => l.level === 'error'), { timeout: 10_000 }).toBe(true);
    const before = performance.now();
    world.bots.splice(world.bots.indexOf(bot), 1);
    expect(await bot.stop(100)).toEqual({ drained: true });
    expect(performance.now() - before).toBeLessThan(2000);
    await starting;
    world.slack.answerNext('apps.connections.open', {}, { times: 0 });
    expect(logs.lines.some((l) => l.msg === 'bot started')).toBe(false);
  });
});
