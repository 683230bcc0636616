import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { enqueue } from '../src/outbox.js';
import { CircuitBreaker } from '../src/payments/index.js';
import { ONE_WORKSPACE } from '../src/store/keys.js';
import { assembledBot, useAssembledWorld } from './support/assembled-bot.js';
import { captureLogs } from './support/bolt.js';

const BOT_TOKEN = 'xoxb-app-edges-token';
const APP_TOKEN = 'xapp-app-edges-token';
const SECRET = 'app-edges-signing-secret';

describe('the assembled bot, at the edges', () => {
  const world = useAssembledWorld({ botToken: BOT_TOKEN, appToken: APP_TOKEN });

  /** The bot as main.ts assembles it, with a breaker of the test's own that opens at the first failure. */
  async function assembled(env: Record<string, string> = {}) {
    const config = loadConfig({
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_SIGNING_SECRET: SECRET,
      SLACK_API_URL: world.slack.apiUrl,
      PAYMENT_API_URL: world.sandbox.url,
      PAYMENT_API_KEY: world.sandbox.apiKey,
      PORT: '0',
      HOST: '127.0.0.1',
      ...env,
    });
    const logs = captureLogs([BOT_TOKEN, APP_TOKEN, SECRET, world.sandbox.apiKey]);
    const breaker = new CircuitBreaker({ threshold: 1, openMs: 0 });
    const bot = await assembledBot({
      config,
      store: world.store,
      logger: logs.logger,
      dispatcher: world.pool,
      breaker,
    });
    world.bots.push(bot);
    return { bot, logs, breaker };
  }

  const breakerLines = (logs: ReturnType<typeof captureLogs>) =>
    logs.lines.filter((l) => l.breaker !== undefined).map((l) => [l.level, l.breaker, l.msg]);

  it('says when the payment service stops and starts answering, and shows the breaker in /metrics', async () => {
    const { bot, logs, breaker } = await assembled();
    const { port } = await bot.start();
    const gauge = async () =>
      /^slackbot_payment_breaker_state (\d)$/m.exec(
        await (await fetch(`http://127.0.0.1:${port}/metrics`)).text(),
      )?.[1];
    expect(await gauge()).toBe('0');

    const call = breaker.admit();
    if (!call) throw new Error('a closed breaker admits a call');
    breaker.record(call, 'not_answered');
    expect(breakerLines(logs)).toEqual([
      ['warn', 'open', 'the payment service is not answering: calls fail at once, watches and feeds pause'],
    ]);
    expect(await gauge()).toBe('2'); // open for no time: a probe may go

    const probe = breaker.admit();
    if (!probe) throw new Error('a half-open breaker admits a probe');
    expect(await gauge()).toBe('1'); // the probe is out: open
    breaker.record(probe, 'answered');
    expect(breakerLines(logs)).toEqual([
      ['warn', 'open', 'the payment service is not answering: calls fail at once, watches and feeds pause'],
      ['info', 'closed', 'the payment service answers again: watches and feeds resume'],
    ]);
    expect(await gauge()).toBe('0');
  });

  it('counts a message Slack will never take in /metrics, by why', async () => {
    const { bot } = await assembled();
    const { port } = await bot.start();
    world.slack.answerNext('chat.postMessage', { ok: false, error: 'is_archived' }, { times: 5 });
    await world.store.transaction((trx) =>
      enqueue(
        trx,
        [{ channel: 'C0ARCHIVED', message: { text: 'Paid', blocks: [] } }],
        Date.now(),
        ONE_WORKSPACE,
      ),
    );
    await expect
      .poll(async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text(), {
        timeout: 8000,
        interval: 50,
      })
      .toMatch(/^slackbot_outbox_dropped_total\{reason="not_in_channel"\} 1$/m);
  });
});
