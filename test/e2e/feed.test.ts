import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { num } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import { freshDatabase } from '../support/postgres-server.js';
import { commandBody } from '../support/slack-requests.js';
import { askBot, type BotProcess, killBot, type Stack, startBot, startStack, until } from './harness.js';

/** The payments feed, end to end, on both stores. */

const stores = {
  SQLite: async () => `file:${join(mkdtempSync(join(tmpdir(), 'bot-e2e-feed-')), 'bot.sqlite')}`,
  PostgreSQL: async () => freshDatabase(inject('postgresUrl')),
};
const FINANCE = 'G0FINANCE';
const BTC = { id: 'BTC', title: 'Bitcoin', balance: num('0.0012') };

let stack: Stack | undefined;
const extra: BotProcess[] = [];
afterEach(async () => {
  await Promise.all(extra.splice(0).map((b) => b.stop()));
  await stack?.close();
  stack = undefined;
});

async function balanceCommand(bot: BotProcess, text: string, channel = FINANCE, timeoutMs?: number) {
  if (!stack) throw new Error('the stack has not started');
  const body = (response_url: string) =>
    commandBody({ command: '/balance', text, response_url, channel_id: channel, user_id: 'U0FINANCE' });
  return (await askBot(bot, stack.slack, body, timeoutMs)).reply;
}

async function start(database: string) {
  stack = await startStack({
    env: { DATABASE_URL: database, BALANCE_POLL_SECONDS: '1' },
    sandbox: { balances: [BTC] },
  });
  stack.slack.conversations.set(FINANCE, { id: FINANCE, is_private: true });
  stack.slack.conversations.set('C0GENERAL', { id: 'C0GENERAL', is_private: false });
  stack.slack.conversations.set('G0CONNECT', { id: 'G0CONNECT', is_private: true, is_ext_shared: true });
  return stack;
}

describe.each(Object.entries(stores))('the payments feed, on %s', (_name, database) => {
  it('posts the exact difference within BALANCE_POLL_SECONDS of a payment, once', async () => {
    const { slack, sandbox, bot } = await start(await database());
    expect(visibleText(await balanceCommand(bot, 'subscribe'))).toContain(
      'the payments feed is on in this channel',
    );
    expect(slack.repliesIn(FINANCE)).toHaveLength(1);

    sandbox.setBalances([
      { ...BTC, balance: num('0.0054') },
      { id: 'LTC', title: 'Litecoin', balance: num('0.0000001') },
    ]);
    const changedAt = Date.now();
    await until(() => slack.repliesIn(FINANCE).length === 2, 'two feed posts');
    expect(Date.now() - changedAt).toBeLessThan(2500);
    expect(visibleText(slack.repliesIn(FINANCE)[1])).toContain(
      '*Bitcoin*: received *+0.0042* BTC — balance 0.0054 BTC\n*Litecoin*: received *+0.0000001* LTC — balance 0.0000001 LTC',
    );
    await new Promise((r) => setTimeout(r, 2500));
    expect(slack.repliesIn(FINANCE)).toHaveLength(2);
  });

  it.each([
    ['C0GENERAL', 'The payments feed needs a private channel'],
    ['G0CONNECT', 'The payments feed cannot go to a shared channel'],
  ])('refuses %s, saying why', async (channel, why) => {
    const { slack, bot } = await start(await database());
    const reply = await balanceCommand(bot, 'subscribe', channel);
    expect(reply?.response_type).toBe('ephemeral');
    expect(visibleText(reply)).toContain(why);
    expect(slack.messages).toEqual([]);
  });

  it('after kill -9, a payment made while it was down is posted once when it is back', async () => {
    const { slack, sandbox, env } = await start(await database());
    await balanceCommand(stack?.bot as BotProcess, 'subscribe');
    await new Promise((r) => setTimeout(r, 1500));
    if (stack) await killBot(stack.bot);
    sandbox.setBalances([{ ...BTC, balance: num('1.0012') }]);
    await new Promise((r) => setTimeout(r, 1500));
    if (stack) stack.bot = await startBot(env);
    await until(() => slack.repliesIn(FINANCE).length === 2, 'two feed posts');
    await new Promise((r) => setTimeout(r, 3000));
    expect(slack.repliesIn(FINANCE)).toHaveLength(2);
    expect(visibleText(slack.repliesIn(FINANCE)[1])).toContain('received *+1* BTC');
  });
});

describe('a feed whose first message Slack took but answered too late', () => {
  it('stays on: the channel is told once, and the next payment is posted', async () => {
    const { slack, sandbox, bot } = await start(await stores.SQLite());
    // Longer than the bot waits for Slack (10 s): the bot's call times out, yet the message is in.
    slack.answerLate('chat.postMessage', 12_000);
    const reply = await balanceCommand(bot, 'subscribe', FINANCE, 25_000);
    expect(visibleText(reply)).toContain('the payments feed is on in this channel');
    expect(slack.repliesIn(FINANCE)).toHaveLength(1);

    sandbox.setBalances([{ ...BTC, balance: num('1.0012') }]);
    await until(() => slack.repliesIn(FINANCE).length === 2, 'the payment’s post');
    await new Promise((r) => setTimeout(r, 2500));
    expect(slack.repliesIn(FINANCE).map((m) => m.text)).toEqual([
      expect.stringMatching(/^Payments feed turned on in this channel/),
      'Received: +1 BTC',
    ]);
  }, 60_000);
});

describe('three instances on one PostgreSQL', () => {
  it('post each change once', async () => {
    const { slack, sandbox, env } = await start(await freshDatabase(inject('postgresUrl')));
    extra.push(await startBot(env), await startBot(env));
    await balanceCommand(stack?.bot as BotProcess, 'subscribe');
    for (let i = 1; i <= 5; i += 1) {
      sandbox.setBalances([{ ...BTC, balance: num(`${i}.0012`) }]);
      await until(() => slack.repliesIn(FINANCE).length === i + 1, `feed post ${i + 1}`);
    }
    await new Promise((r) => setTimeout(r, 3000));
    expect(
      slack
        .repliesIn(FINANCE)
        .slice(1)
        .map((m) => visibleText(m).split('\n')[0]),
    ).toEqual([1, 2, 3, 4, 5].map((i) => `*Bitcoin*: received *+1* BTC — balance ${i}.0012 BTC`));
  });
});
