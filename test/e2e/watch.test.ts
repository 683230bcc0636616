import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import { freshDatabase } from '../support/postgres-server.js';
import {
  type BotProcess,
  killBot,
  type Stack,
  startBot,
  startStack,
  until,
  watchInvoice,
} from './harness.js';

/**
 * Watching, end to end, on both stores: the started bot, the sandbox changing an invoice as a
 * customer's payment would, and the Slack stand-in receiving the bot's own posts and edits.
 */

const OPEN = DEMO_INVOICE_IDS.open;
const stores = {
  SQLite: async () => `file:${join(mkdtempSync(join(tmpdir(), 'bot-e2e-db-')), 'bot.sqlite')}`,
  PostgreSQL: async () => freshDatabase(inject('postgresUrl')),
};

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

async function watchCommand(bot: BotProcess, channel = 'C0SUPPORT') {
  if (!stack) throw new Error('the stack has not started');
  return watchInvoice(bot, stack.slack, OPEN, channel);
}

describe.each(Object.entries(stores))('watching an invoice, on %s', (_name, database) => {
  it('tells the thread within WATCH_POLL_SECONDS when the customer pays: one card edit, one reply naming the change', async () => {
    stack = await startStack({ env: { DATABASE_URL: await database(), WATCH_POLL_SECONDS: '1' } });
    const { slack, sandbox, bot } = stack;
    const reply = await watchCommand(bot);
    expect(reply?.response_type).toBe('ephemeral');
    const [card] = slack.repliesIn('C0SUPPORT');
    if (!card) throw new Error('no live card');
    expect(visibleText(card)).toContain('Watched since');

    sandbox.updateInvoice(OPEN, { payStatus: 'paid', status: 'closed' });
    const changedAt = Date.now();
    await until(
      () => slack.repliesIn('C0SUPPORT', card.ts).length > 0 && card.edits.length > 0,
      'a reply and an edit',
    );
    const ms = Date.now() - changedAt;
    expect(ms).toBeLessThan(2500);
    const [notice] = slack.repliesIn('C0SUPPORT', card.ts);
    expect(visibleText(notice)).toContain(
      '<@U0WATCHER> *Order #1042 — annual support plan* changed:\n• *Status*: Open → `closed`\n• *Payment*: Not paid → `paid`',
    );
    expect(visibleText(card.edits.at(-1))).toContain('*Payment*\n`paid`');
    await new Promise((r) => setTimeout(r, 2500));
    expect(slack.repliesIn('C0SUPPORT', card.ts)).toHaveLength(1);
    expect(card.edits).toHaveLength(1);
  });

  it('after kill -9, a change made while it was down is announced once when it comes back', async () => {
    const databaseUrl = await database();
    stack = await startStack({ env: { DATABASE_URL: databaseUrl, WATCH_POLL_SECONDS: '1' } });
    const { slack, sandbox, env } = stack;
    await watchCommand(stack.bot);
    const [card] = slack.repliesIn('C0SUPPORT');
    if (!card) throw new Error('no live card');
    await new Promise((r) => setTimeout(r, 1500)); // a check or so happens
    await killBot(stack.bot);

    sandbox.updateInvoice(OPEN, { payStatus: 'paid' });
    await new Promise((r) => setTimeout(r, 1500));
    expect(slack.repliesIn('C0SUPPORT', card.ts)).toEqual([]);

    const restarted = await startBot(env);
    stack.bot = restarted;
    await until(() => slack.repliesIn('C0SUPPORT', card.ts).length > 0, 'a reply');
    await new Promise((r) => setTimeout(r, 3000));
    expect(slack.repliesIn('C0SUPPORT', card.ts)).toHaveLength(1);
    expect(visibleText(slack.repliesIn('C0SUPPORT', card.ts)[0])).toContain('*Payment*: Not paid → `paid`');
  });

  it('when Slack takes the card but answers after the deadline: one live card, "watching" said, a retry adds no card', async () => {
    stack = await startStack({ env: { DATABASE_URL: await database(), WATCH_POLL_SECONDS: '1' } });
    const { slack, sandbox, bot } = stack;
    // The bot gives up on a Web API call after 10 s; Slack has posted the card by then.
    slack.answerLate('chat.postMessage', 11_000);
    const reply = visibleText(await watchCommand(bot));
    expect(reply).toContain(
      'Watching *Order #1042 — annual support plan*: its live card is in this channel.',
    );
    expect(reply).not.toContain('nothing was posted');
    const [card, ...more] = slack.repliesIn('C0SUPPORT');
    if (!card) throw new Error('no live card');
    expect(more).toEqual([]);
    expect(visibleText(card)).toContain('Watched since');

    expect(visibleText(await watchCommand(bot))).toContain('is already watched in this channel');
    expect(slack.repliesIn('C0SUPPORT')).toHaveLength(1);

    // The watch is that card's: its change is told in its thread and shown on it.
    sandbox.updateInvoice(OPEN, { payStatus: 'paid' });
    await until(
      () => slack.repliesIn('C0SUPPORT', card.ts).length > 0 && card.edits.length > 0,
      'a reply and an edit',
    );
    expect(visibleText(slack.repliesIn('C0SUPPORT', card.ts)[0])).toContain('*Payment*: Not paid → `paid`');
    expect(visibleText(card.edits.at(-1))).toContain('Watched since');
    expect(slack.problems).toEqual([]);
  }, 60_000);

  it('asks to invite the bot where it cannot post, and watches nothing there', async () => {
    stack = await startStack({ env: { DATABASE_URL: await database(), WATCH_POLL_SECONDS: '1' } });
    const reply = await watchCommand(stack.bot, 'CLOSED1');
    expect(visibleText(reply)).toContain('I cannot post in <#CLOSED1>. Invite me first');
    expect(stack.slack.messages).toEqual([]);
  });
});
