import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import { freshDatabase } from '../support/postgres-server.js';
import { commandBody } from '../support/slack-requests.js';
import {
  askBot,
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

/** `/invoice watching` in `channel`: what the person sees. */
async function watchingCommand(bot: BotProcess, channel = 'C0SUPPORT') {
  if (!stack) throw new Error('the stack has not started');
  const body = (response_url: string) =>
    commandBody({ command: '/invoice', text: 'watching', response_url, channel_id: channel });
  return visibleText((await askBot(bot, stack.slack, body)).reply);
}

/** The bot's reads of the watched invoice so far. */
const invoiceReads = (s: Stack) =>
  s.sandbox.requests.filter((r) => r.path === `/api/v2/invoice/${OPEN}`).length;

/** The end of a watch, said in the same reply as the change that ended it. */
const ENDED_NOTE =
  'No longer watching *Order #1042 — annual support plan*: it no longer awaits payment, so nothing more is expected to change.';

describe.each(Object.entries(stores))('watching an invoice, on %s', (_name, database) => {
  it('tells the thread within WATCH_POLL_SECONDS when the customer pays, and ends the watch: one card edit, one reply with the change and the end, no check after', async () => {
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
      () => slack.repliesIn('C0SUPPORT', card.ts).length >= 1 && card.edits.length > 0,
      'a reply and an edit',
    );
    const ms = Date.now() - changedAt;
    expect(ms).toBeLessThan(2500);
    // The check that saw the payment says what changed and, in the same reply, that the watch has ended.
    const [notice] = slack.repliesIn('C0SUPPORT', card.ts);
    expect(visibleText(notice)).toContain(
      `<@U0WATCHER> *Order #1042 — annual support plan* changed:\n• *Status*: Open → Closed\n• *Payment*: Not paid → Paid\n${ENDED_NOTE}`,
    );
    expect(visibleText(notice)).toContain('as sent: status `open` → `closed`, payment `none` → `paid`');
    // The card's one edit shows the invoice paid and the watch over: no Stop, Refresh instead.
    const edited = visibleText(card.edits.at(-1));
    expect(edited).toContain('*Status*\nClosed');
    expect(edited).toContain('*Payment*\nPaid');
    expect(edited).toContain('No longer watched since');
    expect(edited).toContain('Refresh');
    expect(edited).not.toContain('Stop watching');
    const reads = invoiceReads(stack);
    await new Promise((r) => setTimeout(r, 2500));
    expect(slack.repliesIn('C0SUPPORT', card.ts)).toHaveLength(1);
    expect(card.edits).toHaveLength(1);
    expect(invoiceReads(stack)).toBe(reads); // not checked again
    expect(await watchingCommand(bot)).toContain('Nothing is watched in <#C0SUPPORT>');
  });

  it('after kill -9, a payment made while it was down is announced once when it comes back, and the watch ends once', async () => {
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
    await until(() => slack.repliesIn('C0SUPPORT', card.ts).length >= 1, 'the change and the end');
    await new Promise((r) => setTimeout(r, 3000));
    expect(slack.repliesIn('C0SUPPORT', card.ts).map((m) => visibleText(m))).toEqual([
      expect.stringContaining(`*Payment*: Not paid → Paid\n${ENDED_NOTE}`),
    ]);
    expect(card.edits).toHaveLength(1);
    expect(visibleText(card.edits[0])).toContain('No longer watched since');
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

    // The watch is that card's: its change is told in its thread and shown on it. A part payment
    // leaves the invoice awaiting the rest, so the watch goes on.
    sandbox.updateInvoice(OPEN, { payStatus: 'partially_paid' });
    await until(
      () => slack.repliesIn('C0SUPPORT', card.ts).length > 0 && card.edits.length > 0,
      'a reply and an edit',
    );
    expect(slack.repliesIn('C0SUPPORT', card.ts).map((m) => visibleText(m))).toEqual([
      expect.stringContaining('*Payment*: Not paid → Partially paid'),
    ]);
    expect(visibleText(card.edits.at(-1))).toContain('*Payment*\nPartially paid');
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
