import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/server.js';
import { visibleText } from '../support/block-kit.js';
import { freshDatabase } from '../support/postgres-server.js';
import { commandBody, postToBot } from '../support/slack-requests.js';
import { startSlackStandIn } from '../support/slack-stand-in.js';
import { type BotProcess, botEnv, HOME_TEAM, SECRETS, startBot, until } from './harness.js';
import { manyInvoices } from './invoices.js';

/**
 * PostgreSQL going away under running instances (issue 31, point 1): the server drops every
 * connection (a restart, a failover, a proxy's idle cut), then for a while accepts connections
 * that can only read (the old primary during a failover). The instances stay up, and a payment
 * made meanwhile is announced once, when the database writes again, and so is the end of its watch.
 */

const INVOICE = '00000000-0000-4000-9000-000000000031';

async function asAdmin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Drops every connection to the database but the caller's, as a restart of the server would. */
const dropConnections = (url: string) =>
  asAdmin(url, (c) =>
    c.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    ),
  );

/** New sessions can only read (on) or write again (off): a failover's old primary, then the new one. */
const readOnly = (url: string, on: boolean) =>
  asAdmin(url, async (c) => {
    // This session writes whatever the database's default says.
    await c.query('set default_transaction_read_only = off');
    const { rows } = await c.query<{ db: string }>('select current_database() as db');
    await c.query(`alter database "${rows[0]?.db}" set default_transaction_read_only = ${on ? 'on' : 'off'}`);
  });

describe('two instances while PostgreSQL drops its connections and fails over', () => {
  const bots: BotProcess[] = [];
  afterAll(async () => {
    await Promise.all(bots.map((b) => b.stop()));
  });

  it('stay up, log it, and announce a payment made meanwhile once the database writes again', async () => {
    const sandbox = await startSandbox({ invoices: manyInvoices([INVOICE]) });
    const slack = await startSlackStandIn({ teamId: HOME_TEAM, botToken: SECRETS.botToken });
    const url = await freshDatabase(inject('postgresUrl'));
    try {
      const env = {
        ...botEnv(sandbox, slack.apiUrl),
        DATABASE_URL: url,
        WATCH_POLL_SECONDS: '1',
        LOG_LEVEL: 'info',
      };
      bots.push(...(await Promise.all([startBot(env), startBot(env)])));
      const body = commandBody({
        command: '/invoice',
        text: `watch ${INVOICE}`,
        response_url: slack.responseUrl(),
        channel_id: 'C0FINANCE',
      });
      await postToBot(`${bots[0]?.url}/slack/events`, body, SECRETS.signingSecret);
      await until(() => slack.messages.some((m) => !m.threadTs), 'the live card', 15_000);
      await new Promise((resolve) => setTimeout(resolve, 1500)); // checks running on both

      await dropConnections(url);
      await readOnly(url, true);
      await dropConnections(url);
      sandbox.updateInvoice(INVOICE, { payStatus: 'paid' });
      await new Promise((resolve) => setTimeout(resolve, 4000));
      for (const bot of bots) expect(bot.child.exitCode, 'an instance exited').toBeNull();
      expect(slack.messages.filter((m) => m.threadTs)).toEqual([]);

      await readOnly(url, false);
      await dropConnections(url);
      await until(() => slack.messages.some((m) => m.threadTs), 'the paid notice', 30_000);
      await new Promise((resolve) => setTimeout(resolve, 3000));
      // Paid is final: the change and the end of the watch, in one reply, once.
      const replies = slack.messages.filter((m) => m.threadTs);
      expect(replies.map((m) => visibleText(m))).toEqual([
        expect.stringContaining(
          '*Payment*: Not paid → Paid\nNo longer watching *Order 0*: it no longer awaits payment',
        ),
      ]);
      for (const bot of bots) {
        expect(bot.child.exitCode).toBeNull();
        const told = bot.output.filter((l) => l.includes('the database dropped connections'));
        expect(told.length).toBeGreaterThanOrEqual(1);
        expect(bot.output.join('\n')).not.toContain(new URL(url).password || 'no-password-in-url');
      }
    } finally {
      await slack.close();
      await sandbox.close();
    }
  });
});
