import { describe, expect, it } from 'vitest';
import { ACTION_STOP_WATCH } from '../../src/domain/actions.js';
import { DEMO_INVOICE_IDS, num } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import { useWorkspacesBot, type Workspace, workspace } from '../support/workspaces-bot.js';

/**
 * How watches end in the many-workspaces bot assembled as src/main.ts does: one still being
 * started, by a Disconnect or by `/invoice unwatch`, is left in no state nobody can leave; a
 * Replace key by another account ends them for that reason; and what people read after a
 * Disconnect is true of a workspace that was connected a minute ago.
 */

const many = useWorkspacesBot();

let merchants = 0;
/** A merchant's key, whose account holds the demo's open invoice unless `empty`. */
function merchant({ empty = false } = {}): string {
  merchants += 1;
  const key = `merchant-${merchants}-watch-ends-key-4e3d2c1b`;
  many.bot.sandbox.addMerchant(key, {
    balances: [{ id: 'XMR', title: 'Monero', balance: num('1') }],
    invoices: empty ? [] : many.bot.sandbox.invoices.filter((i) => i.id === DEMO_INVOICE_IDS.open),
  });
  return key;
}

/** A connected workspace whose merchant's account holds the demo's open invoice. */
async function connected(name: string): Promise<Workspace> {
  const w = workspace(name);
  many.bot.slack.people.set(w.installer, { team_id: w.team });
  expect((await many.bot.install(w)).status).toBe(200);
  expect((await many.bot.submitKey(w, w.installer, merchant())).body).toBe('');
  return w;
}

const rowsOf = (table: 'watches' | 'watched_invoices', w: Workspace) =>
  many.bot.store.db.selectFrom(table).selectAll().where('installation_id', '=', w.team).execute();

/** Starts a watch of the open invoice in `channel` whose card Slack answers for late: pending meanwhile. */
async function slowStart(w: Workspace, channel: string) {
  many.bot.slack.answerLate('chat.postMessage', 1500);
  const watching = many.bot.command(w, w.installer, `watch ${DEMO_INVOICE_IDS.open}`, {
    command: '/invoice',
    channel,
  });
  await expect.poll(async () => (await rowsOf('watches', w)).map((r) => r.state)).toEqual(['pending']);
  // In a box: an async function resolving with a promise would wait for it.
  return { watching };
}

/** The card of the channel's watch, once edited: what it shows. */
async function editedCard(channel: string) {
  const [card] = many.bot.slack.repliesIn(channel);
  if (!card) throw new Error('no live card');
  await expect.poll(() => card.edits.length, { timeout: 3000 }).toBeGreaterThan(0);
  await expect.poll(() => many.bot.slack.repliesIn(channel, card.ts).length, { timeout: 3000 }).toBe(1);
  return { card, shown: visibleText(card.edits.at(-1)) };
}

describe('/invoice unwatch of a watch whose card is still being posted', () => {
  it('stops it: the stopper is told so, the card once in Slack says it was stopped, and nothing is checked', async () => {
    const w = await connected('unwatch');
    const channel = 'C0UNWATCH';
    const { watching } = await slowStart(w, channel);
    const stop = await many.bot.command(w, w.installer, `unwatch ${DEMO_INVOICE_IDS.open}`, {
      command: '/invoice',
      channel,
    });
    expect(visibleText(stop.reply)).toContain('Stopped watching *Order #1042 — annual support plan*');
    expect(visibleText((await watching).reply)).toContain('ended as it started: stopped');
    const { card, shown } = await editedCard(channel);
    expect(shown).toContain('stopped');
    expect(shown).not.toContain('Stop watching');
    expect((await rowsOf('watches', w)).map((r) => [r.state, r.end_reason, r.card_ts])).toEqual([
      ['ended', 'stopped', card.ts],
    ]);
    expect(await rowsOf('watched_invoices', w)).toEqual([]);
  });
});

describe('a Disconnect', () => {
  it('ends a watch whose card is still being posted: the card, once in Slack, says why, and nothing is checked', async () => {
    const w = await connected('pending');
    const channel = 'C0PENDING';
    const { watching } = await slowStart(w, channel);
    const from = many.bot.logs.length;
    expect((await many.bot.click(w, w.installer, 'disconnect_payment_account')).status).toBe(200);
    expect(await many.bot.logged('payment account disconnected', from)).toMatchObject({ watchesEnded: 1 });

    const said = visibleText((await watching).reply);
    expect(said).toContain('ended as it started');
    expect(said).toContain('the workspace’s payment account was disconnected');
    const { card, shown } = await editedCard(channel);
    expect(shown).toContain('payment account was disconnected');
    expect(shown).not.toContain('Stop watching');
    const rows = await rowsOf('watches', w);
    expect(rows.map((r) => [r.state, r.end_reason, r.card_ts])).toEqual([
      ['ended', 'account_disconnected', card.ts],
    ]);
    expect(await rowsOf('watched_invoices', w)).toEqual([]);
  });

  it('leaves people told that the account is not connected, not that it is not connected "yet"', async () => {
    const w = await connected('after');
    expect((await many.bot.click(w, w.installer, 'disconnect_payment_account')).status).toBe(200);
    const reply = visibleText((await many.bot.command(w, w.installer, '')).reply);
    expect(reply).toContain('The payment account is not connected');
    expect(reply).not.toContain('yet');
    // The Home tab the Disconnect republished.
    const home = () => JSON.stringify(many.bot.slack.homeViews.at(-1)?.view);
    await expect.poll(home, { timeout: 3000 }).toContain('The payment account is not connected');
    expect(home()).not.toContain('not connected yet');
  });
});

describe('a Replace key by another account’s key', () => {
  it('ends each watch its account does not know for that reason, not as an invoice the service no longer knows', async () => {
    const w = await connected('replaced');
    const channel = 'C0REPLACED';
    await many.bot.command(w, w.installer, `watch ${DEMO_INVOICE_IDS.open}`, {
      command: '/invoice',
      channel,
    });
    expect((await many.bot.submitKey(w, w.installer, merchant({ empty: true }))).body).toBe('');

    const { card, shown } = await editedCard(channel);
    expect(shown).toContain(
      'the workspace’s payment key was replaced by one whose account does not know this invoice',
    );
    expect(visibleText(many.bot.slack.repliesIn(channel, card.ts)[0])).not.toContain('no longer knows');
    expect((await rowsOf('watches', w)).map((r) => [r.state, r.end_reason])).toEqual([
      ['ended', 'account_replaced'],
    ]);
  });

  it('keeps the watches the new key’s account knows: read with it, they go on', async () => {
    const w = await connected('rotated');
    const channel = 'C0ROTATED';
    await many.bot.command(w, w.installer, `watch ${DEMO_INVOICE_IDS.open}`, {
      command: '/invoice',
      channel,
    });
    expect((await many.bot.submitKey(w, w.installer, merchant())).body).toBe('');
    // Checked with the new key (WATCH_POLL_SECONDS=1): read, so no longer marked.
    await expect
      .poll(async () => (await rowsOf('watched_invoices', w)).map((r) => r.account_replaced), {
        timeout: 5000,
      })
      .toEqual([0]);
    expect((await rowsOf('watches', w)).map((r) => r.state)).toEqual(['active']);
  });
});

describe('a watch started while its account is disconnected', () => {
  it('ends at its first check, saying why, instead of waiting for an account that is gone', async () => {
    const w = await connected('raced');
    const channel = 'C0RACED';
    // The start reads the invoice with the old key; the Disconnect commits meanwhile.
    many.bot.sandbox.setLatency(800);
    const watching = many.bot.command(w, w.installer, `watch ${DEMO_INVOICE_IDS.open}`, {
      command: '/invoice',
      channel,
    });
    await new Promise((r) => setTimeout(r, 200));
    expect((await many.bot.click(w, w.installer, 'disconnect_payment_account')).status).toBe(200);
    many.bot.sandbox.setLatency(0);
    await watching;
    const { shown } = await editedCard(channel);
    expect(shown).toContain('payment account was disconnected');
    expect(shown).not.toContain('Stop watching');
    expect((await rowsOf('watches', w)).map((r) => [r.state, r.end_reason])).toEqual([
      ['ended', 'account_disconnected'],
    ]);
    expect(await rowsOf('watched_invoices', w)).toEqual([]);
  });
});

describe('Stop once the account is disconnected', () => {
  it('tells the clicker every watch ended with the Disconnect, on a card or with /invoice unwatch, not that nothing is connected', async () => {
    const w = await connected('stopafter');
    expect((await many.bot.click(w, w.installer, 'disconnect_payment_account')).status).toBe(200);
    const responseUrl = many.bot.slack.responseUrl();
    expect((await many.bot.click(w, w.installer, ACTION_STOP_WATCH, { responseUrl })).status).toBe(200);
    const clicked = visibleText((await many.bot.slack.waitForPost(responseUrl)).body);
    expect(clicked).toContain(
      'Nothing is watched here: the payment account is not connected, and a Disconnect ends every watch',
    );
    const unwatch = await many.bot.command(w, w.installer, `unwatch ${DEMO_INVOICE_IDS.open}`, {
      command: '/invoice',
      channel: 'C0STOPAFTER',
    });
    expect(visibleText(unwatch.reply)).toContain('Nothing is watched here');
    // Anything else is told the account is not connected, as before.
    const balance = await many.bot.command(w, w.installer, '');
    expect(visibleText(balance.reply)).toContain('The payment account is not connected');
  });
});
