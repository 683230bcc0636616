import { afterAll, describe, expect, inject, it } from 'vitest';
import { DEMO_INVOICE_IDS, num } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import { freshDatabase } from '../support/postgres-server.js';
import { commandBody } from '../support/slack-requests.js';
import { askBot, type BotProcess, type Stack, startBot, startStack, until, watchInvoice } from './harness.js';

/**
 * Two instances on one PostgreSQL, one with its clock three minutes ahead (an unsynchronised
 * machine): one payment is announced once in the payments feed and once in the watch's thread,
 * and nothing is announced again at later polls.
 */

const SHIFTED_CLOCK = new URL('./shifted-clock.mjs', import.meta.url).pathname;
const FINANCE = 'G0FINANCE';
const OPEN = DEMO_INVOICE_IDS.open;
const BTC = { id: 'BTC', title: 'Bitcoin', balance: num('0.0012') };

describe('two instances three minutes apart on PostgreSQL', () => {
  let stack: Stack | undefined;
  const ahead: BotProcess[] = [];
  afterAll(async () => {
    await Promise.all(ahead.map((b) => b.stop()));
    await stack?.close();
  });

  it('announce one payment once in the feed and once in the watch’s thread', async () => {
    stack = await startStack({
      env: {
        DATABASE_URL: await freshDatabase(inject('postgresUrl')),
        BALANCE_POLL_SECONDS: '1',
        WATCH_POLL_SECONDS: '1',
      },
      sandbox: { balances: [BTC] },
    });
    const { slack, sandbox, bot, env } = stack;
    ahead.push(
      await startBot(
        { ...env, CLOCK_SHIFT_MS: String(3 * 60_000) },
        { nodeArgs: ['--import', SHIFTED_CLOCK] },
      ),
    );
    slack.conversations.set(FINANCE, { id: FINANCE, is_private: true });
    const subscribe = (responseUrl: string) =>
      commandBody({
        command: '/balance',
        text: 'subscribe',
        response_url: responseUrl,
        channel_id: FINANCE,
        user_id: 'U0FINANCE',
      });
    expect(visibleText((await askBot(bot, slack, subscribe)).reply)).toContain('the payments feed is on');
    await watchInvoice(ahead[0] as BotProcess, slack, OPEN, 'C0SUPPORT');
    await until(() => slack.repliesIn('C0SUPPORT').length === 1, 'the live card');
    // Both instances poll for a few seconds before the payment, and for a while after it.
    await new Promise((r) => setTimeout(r, 3_000));

    sandbox.updateInvoice(OPEN, { payStatus: 'paid' });
    sandbox.setBalances([{ ...BTC, balance: num('0.0054') }]);
    const feedPosts = () =>
      slack
        .repliesIn(FINANCE)
        .slice(1)
        .map((m) => visibleText(m));
    const threadReplies = () => slack.messages.filter((m) => m.channel === 'C0SUPPORT' && m.threadTs);
    await until(() => feedPosts().length >= 1 && threadReplies().length >= 1, 'the announcements', 20_000);

    // The instance ahead stops; the other restarts and reads on alone: a second payment.
    await Promise.all([ahead[0]?.stop(), bot.stop()]);
    stack.bot = await startBot(env);
    sandbox.setBalances([{ ...BTC, balance: num('0.01') }]);
    await until(() => feedPosts().length >= 2, 'the second payment', 20_000);
    await new Promise((r) => setTimeout(r, 5_000));

    expect(feedPosts()).toEqual([
      expect.stringContaining('*Bitcoin*: received *+0.0042* BTC — balance 0.0054 BTC'),
      expect.stringContaining('*Bitcoin*: received *+0.0046* BTC — balance 0.01 BTC'),
    ]);
    const changes = threadReplies().filter((m) => visibleText(m).includes('Paid'));
    expect(changes).toHaveLength(1);
  }, 60_000);
});
