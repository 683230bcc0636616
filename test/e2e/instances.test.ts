import { afterAll, describe, expect, inject, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/server.js';
import { visibleText } from '../support/block-kit.js';
import { freshDatabase } from '../support/postgres-server.js';
import { commandBody, postToBot } from '../support/slack-requests.js';
import { startSlackStandIn } from '../support/slack-stand-in.js';
import { type BotProcess, botEnv, HOME_TEAM, SECRETS, startBot, until } from './harness.js';
import { manyInvoices } from './invoices.js';

/**
 * Several instances on one PostgreSQL: every change announced exactly once, none twice, also when
 * one instance is killed (kill -9) while the announcements are going out. A payment is final, so
 * each watch ends with it: its thread gets one reply, the change and that the watch has ended.
 */

const COUNT = 200;
const ids = Array.from({ length: COUNT }, (_, i) => `00000000-0000-4000-9000-${String(i).padStart(12, '0')}`);

describe('three instances on one PostgreSQL', () => {
  const bots: BotProcess[] = [];
  afterAll(async () => {
    await Promise.all(bots.map((b) => b.stop()));
  });

  it('announce each of 200 payments, and the end of each watch, exactly once and in order, one instance killed halfway', async () => {
    const sandbox = await startSandbox({ invoices: manyInvoices(ids) });
    const slack = await startSlackStandIn({ teamId: HOME_TEAM, botToken: SECRETS.botToken });
    try {
      const env = {
        ...botEnv(sandbox, slack.apiUrl),
        DATABASE_URL: await freshDatabase(inject('postgresUrl')),
        WATCH_POLL_SECONDS: '1',
        PAYMENT_API_BACKGROUND_RPS: '100',
        LOG_LEVEL: 'info',
      };
      bots.push(...(await Promise.all([startBot(env), startBot(env), startBot(env)])));

      // 200 watches, one per invoice, asked of the three instances in turn.
      for (let i = 0; i < COUNT; i += 10) {
        await Promise.all(
          ids.slice(i, i + 10).map((id, j) => {
            const bot = bots[(i + j) % 3] as BotProcess;
            const body = commandBody({
              command: '/invoice',
              text: `watch ${id}`,
              response_url: slack.responseUrl(),
              channel_id: `C${i + j}`,
            });
            return postToBot(`${bot.url}/slack/events`, body, SECRETS.signingSecret);
          }),
        );
      }
      await until(() => slack.messages.filter((m) => !m.threadTs).length === COUNT, '200 live cards', 30_000);
      const cards = slack.messages.filter((m) => !m.threadTs);

      for (const id of ids) sandbox.updateInvoice(id, { payStatus: 'paid' });
      const replies = () => slack.messages.filter((m) => m.threadTs);
      await until(() => replies().length >= COUNT / 2, 'half the announcements', 30_000);
      const victim = bots[0] as BotProcess;
      victim.child.kill('SIGKILL');
      await victim.exited;

      // Its leases run out within 30 s; the others take its work over.
      await until(() => replies().length >= COUNT, 'every announcement', 60_000);
      await new Promise((r) => setTimeout(r, 3000));
      // Per card: one reply, the payment and the end together, once.
      const perCard = new Map(cards.map((c) => [c.ts, [] as string[]]));
      for (const r of replies()) {
        const said = visibleText(r);
        perCard
          .get(r.threadTs ?? '')
          ?.push(
            said.includes('• *Payment*: Not paid → Paid') &&
              said.includes('No longer watching') &&
              said.includes('no longer awaits payment')
              ? 'paid, ended'
              : said,
          );
      }
      expect([...perCard.values()].filter((said) => said.join() !== 'paid, ended')).toEqual([]);
      expect(replies()).toHaveLength(COUNT);
      expect(cards.every((c) => visibleText(c.edits.at(-1)).includes('No longer watched since'))).toBe(true);
      expect(slack.problems).toEqual([]);
    } finally {
      await slack.close();
      await sandbox.close();
    }
  }, 180_000);
});
