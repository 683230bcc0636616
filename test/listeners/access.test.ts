import { beforeEach, describe, expect, it } from 'vitest';
import type { ButtonHandler } from '../../src/listeners/actions/click.js';
import { createRefreshInvoiceAction } from '../../src/listeners/actions/refresh-invoice.js';
import { createShareInvoiceAction } from '../../src/listeners/actions/share-invoice.js';
import { createStopWatchAction } from '../../src/listeners/actions/stop-watch.js';
import { createWatchInvoiceAction } from '../../src/listeners/actions/watch-invoice.js';
import { createBalanceCommand } from '../../src/listeners/commands/balance.js';
import { createInvoiceCommand } from '../../src/listeners/commands/invoice.js';
import type { ListenerDeps } from '../../src/listeners/deps.js';
import { createAppHomeOpened } from '../../src/listeners/events/app-home-opened.js';
import type { HomeClient } from '../../src/listeners/home.js';
import { actionListener, commandListener } from '../../src/pipeline/kinds.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { buttonArgs, captureLogs, commandArgs, type DepsOptions, HOME_TEAM } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { useSandbox } from '../support/use-sandbox.js';

/**
 * Issue 22 §1–§3 through the real listeners: the App Home obeys the balance's channel list and
 * the person's own organisation, and nobody of another organisation changes anything.
 */
const env = useSandbox();
const OPEN = DEMO_INVOICE_IDS.open;
const GUEST = { id: 'U0GUEST', username: 'guest', team_id: 'T0GUEST' };

beforeEach(async () => {
  await emptyWork(env.store);
  env.poster.conversations.set('G0FINANCE', { isPrivate: true, isDirect: false, isShared: false });
});

async function openHome(user: string, opts: DepsOptions = {}) {
  const published: { view: { blocks: unknown[] } }[] = [];
  const client: HomeClient = { views: { publish: async (a) => void published.push(a as never) } };
  const event = { type: 'app_home_opened', user, channel: 'D0HOME', tab: 'home', event_ts: '1.2' };
  // The envelope always names the workspace the app is installed in, whoever opens the tab.
  await createAppHomeOpened(env.deps(opts))({ event, body: { team_id: HOME_TEAM }, client } as never);
  const blocks = published[0]?.view.blocks;
  expectValidMessage({ text: 'home', blocks });
  return visibleText({ blocks });
}

async function command(name: '/invoice' | '/balance', text: string, overrides: Record<string, string> = {}) {
  const logs = captureLogs();
  const deps = env.deps({ logger: logs.logger });
  const handler = name === '/invoice' ? createInvoiceCommand(deps) : createBalanceCommand(deps);
  const { args, rec } = commandArgs({ command: name, text, ...overrides });
  await commandListener(deps, name, handler)(args);
  const reply = rec.acks[0] ?? rec.responses[0];
  return { outcome: logs.lines.at(-1)?.outcome, reply: reply as Record<string, unknown> | undefined };
}

async function guestClicks(
  actionId: string,
  create: (deps: ListenerDeps) => ButtonHandler,
  value: string,
  container: Record<string, unknown> = {},
) {
  const logs = captureLogs();
  const deps = env.deps({ logger: logs.logger });
  const { args, rec } = buttonArgs(value, { actionId });
  Object.assign(args.body, {
    user: GUEST,
    container: { type: 'message', message_ts: '1700000000.000100', channel_id: 'C0SUPPORT', ...container },
  });
  await actionListener(deps, actionId, create(deps))(args);
  return {
    outcome: logs.lines.at(-1)?.outcome,
    reply: rec.responses[0] as Record<string, unknown> | undefined,
  };
}

describe('§1 the App Home when BALANCE_ALLOWED_CHANNELS limits the balance', () => {
  it('shows no amount and says in which channels the balance can be read, calling nothing', async () => {
    const text = await openHome('U0ANYONE', { policy: { allowedChannels: ['C0FINANCE', 'G0BOOKS'] } });
    expect(text).toContain(
      'The balance is read only in the channels the bot’s admin set for it: `/balance` in <#C0FINANCE>, <#G0BOOKS>.',
    );
    expect(text).not.toContain('BTC');
    expect(env.sandbox.requests).toEqual([]);
  });

  it('agrees with /balance: refused outside those channels, shown in them', async () => {
    const policy = { allowedChannels: ['C0FINANCE'] };
    const deps = env.deps({ policy });
    const ask = async (channel: string) => {
      const { args, rec } = commandArgs({ command: '/balance', text: '', channel_id: channel });
      await commandListener(deps, '/balance', createBalanceCommand(deps))(args);
      return visibleText(rec.acks[0] ?? rec.responses[0]);
    };
    expect(await ask('C0GENERAL')).toContain('Use it in <#C0FINANCE>');
    expect(await ask('C0FINANCE')).toContain('0.0123456 BTC');
  });
});

describe('§2 the App Home asks the person’s own team, not the event’s', () => {
  it('shows a guest of another organisation no balance and no feeds, though the event names the home workspace', async () => {
    const text = await openHome('U0GUEST', {
      people: { U0GUEST: { teamId: 'T0GUEST', enterpriseId: undefined } },
    });
    expect(text).toContain('The balance is only for members of this workspace.');
    expect(text).not.toContain('BTC');
    expect(text).not.toContain('Payments feeds');
    expect(env.sandbox.requests).toEqual([]);
  });

  it('still opens, with no balance and no feeds, when Slack will not say who the person is (users.info failing)', async () => {
    const logs = captureLogs();
    const text = await openHome('U0MEMBER', { directoryFails: true, logger: logs.logger });
    expect(text).toContain('The balance is only for members of this workspace.');
    expect(text).not.toContain('BTC');
    expect(text).not.toContain('Payments feeds');
    expect(env.sandbox.requests).toEqual([]);
    expect(logs.lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        msg: 'could not look the person up with users.info: their App Home shows no balance and no feeds',
      }),
    );
  });

  it('shows someone Slack does not know no balance either', async () => {
    const text = await openHome('U0GONE', { people: { U0GONE: undefined } });
    expect(text).toContain('The balance is only for members of this workspace.');
    expect(text).toContain('Your watches (0)');
  });

  it('lists the watches a member started in their own team', async () => {
    await command('/invoice', `watch ${OPEN}`, { user_id: 'U0ASKER' });
    expect(await openHome('U0ASKER')).toContain('Your watches (1)');
  });
});

describe('§3 nobody of another organisation changes anything', () => {
  const watched = async () => {
    await command('/invoice', `watch ${OPEN}`);
    const [watch] = await env.deps().watches.list('C0SUPPORT');
    if (!watch) throw new Error('no watch started');
    env.poster.calls.length = 0;
    return watch;
  };
  const outboxRows = async () => (await env.store.db.selectFrom('outbox').selectAll().execute()).length;
  const refusedPrivately = (reply: Record<string, unknown> | undefined, title: string) => {
    expect(reply).toMatchObject({ response_type: 'ephemeral' });
    expect(reply?.replace_original ?? false).toBe(false);
    expect(visibleText(reply)).toContain(title);
  };

  it('Stop watching on the live card: refused, the watch goes on, its thread hears nothing', async () => {
    const watch = await watched();
    const before = await outboxRows();
    const { outcome, reply } = await guestClicks('stop_watch', createStopWatchAction, watch.id);
    expect(outcome).toBe('other_workspace');
    refusedPrivately(reply, 'Watches are only for members of this workspace');
    expect(await env.deps().watches.list('C0SUPPORT')).toHaveLength(1);
    expect(await outboxRows()).toBe(before);
  });

  it('Stop in the private list: refused, and the list is not replaced', async () => {
    const watch = await watched();
    const { outcome, reply } = await guestClicks('stop_watch:0', createStopWatchAction, watch.id, {
      is_ephemeral: true,
    });
    expect(outcome).toBe('other_workspace');
    refusedPrivately(reply, 'Watches are only for members of this workspace');
    expect(await env.deps().watches.list('C0SUPPORT')).toHaveLength(1);
  });

  it('/invoice unwatch: refused, the watch goes on', async () => {
    await watched();
    const { outcome, reply } = await command('/invoice', `unwatch ${OPEN}`, { team_id: 'T0GUEST' });
    expect(outcome).toBe('other_workspace');
    refusedPrivately(reply, 'Watches are only for members of this workspace');
    expect(await env.deps().watches.list('C0SUPPORT')).toHaveLength(1);
  });

  it('Watch: refused before anything is read or posted', async () => {
    const { outcome, reply } = await guestClicks('watch_invoice', createWatchInvoiceAction, OPEN);
    expect(outcome).toBe('other_workspace');
    refusedPrivately(reply, 'Watches are only for members of this workspace');
    expect(env.sandbox.requests).toEqual([]);
    expect(env.poster.calls).toEqual([]);
  });

  it('Share in thread: refused, nothing read, nothing posted', async () => {
    const { outcome, reply } = await guestClicks(
      'share_invoice:0',
      createShareInvoiceAction,
      `${OPEN} 1700000000.000500`,
      {
        is_ephemeral: true,
      },
    );
    expect(outcome).toBe('other_workspace');
    refusedPrivately(reply, 'Sharing and refreshing invoice cards is only for members of this workspace');
    expect(env.sandbox.requests).toEqual([]);
    expect(env.poster.calls).toEqual([]);
  });

  it('Refresh of a card the channel sees: refused, the card left as it was; of their own private card: refreshed', async () => {
    const shared = await guestClicks('refresh_invoice', createRefreshInvoiceAction, OPEN);
    expect(shared.outcome).toBe('other_workspace');
    refusedPrivately(
      shared.reply,
      'Sharing and refreshing invoice cards is only for members of this workspace',
    );
    expect(env.sandbox.requests).toEqual([]);
    const own = await guestClicks('refresh_invoice', createRefreshInvoiceAction, OPEN, {
      is_ephemeral: true,
    });
    expect(own.outcome).toBe('ok');
    expect(own.reply).toMatchObject({ replace_original: true });
  });

  it('/balance subscribe and unsubscribe: refused, the channel’s feed goes on', async () => {
    expect((await command('/balance', 'subscribe', { channel_id: 'G0FINANCE' })).outcome).toBe('ok');
    for (const verb of ['unsubscribe', 'subscribe']) {
      const { outcome, reply } = await command('/balance', verb, {
        channel_id: 'G0FINANCE',
        team_id: 'T0GUEST',
      });
      expect(outcome).toBe('other_workspace');
      refusedPrivately(reply, 'The balance is only for members of this workspace');
    }
    expect(await env.deps().feed.list(HOME_TEAM)).toHaveLength(1);
  });
});
