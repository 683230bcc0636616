import type { App, Middleware } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { SHORTCUT_CHECK_PAYMENT } from '../../src/domain/actions.js';
import { COMMANDS } from '../../src/domain/commands.js';
import { FUNCTION_GET_INVOICE } from '../../src/listeners/functions/get-invoice.js';
import { type Handlers, type MoreRoutes, registerListeners } from '../../src/listeners/index.js';
import { classify } from '../../src/listeners/router.js';
import { ROUTES } from '../../src/listeners/routes.js';
import { captureLogs } from '../support/bolt.js';

/**
 * The one global middleware registerListeners installs (the router), driven with the arguments
 * Bolt would hand it, and handlers that only record.
 */
function routed(more: (record: (name: string) => () => Promise<void>) => MoreRoutes = () => ({})) {
  const middlewares: Middleware<never>[] = [];
  const app = { use: (m: Middleware<never>) => middlewares.push(m) } as unknown as App;
  const calls: string[] = [];
  const record = (name: string) => async () => {
    calls.push(name);
  };
  const buttons = ROUTES.filter((r) => r.of === 'installation' && r.kind === 'action').map((r) => r.name);
  const handlers = {
    command: Object.fromEntries(COMMANDS.map((c) => [c, record(`command ${c}`)])),
    action: Object.fromEntries(buttons.map((b) => [b, record(`button ${b}`)])),
    shortcut: { [SHORTCUT_CHECK_PAYMENT]: record('shortcut') },
    event: { link_shared: record('event link_shared'), app_home_opened: record('event app_home_opened') },
    function: { [FUNCTION_GET_INVOICE]: record('step') },
  } as unknown as Handlers;
  const contexts: unknown[] = [];
  const logs = captureLogs();
  registerListeners(
    app,
    { logger: logs.logger },
    async (context) => {
      contexts.push(context);
      return handlers;
    },
    more(record),
  );
  expect(middlewares).toHaveLength(1);

  /** One request through the router: what was called, how often it was acked. */
  async function send(args: Record<string, unknown>) {
    let acks = 0;
    const full = {
      context: { teamId: 'T1' },
      ack: async () => {
        acks += 1;
        calls.push('ack');
      },
      ...args,
      next: async () => {
        throw new Error('the router passes nothing on');
      },
    };
    await (middlewares[0] as (a: unknown) => Promise<void>)(full);
    return { calls: [...calls], acks };
  }
  return { send, contexts, calls, logs };
}

const command = (name: string) => ({ body: { command: name }, command: { command: name } });
const click = (actionId: string) => ({
  body: { type: 'block_actions', actions: [{ action_id: actionId }] },
  action: { action_id: actionId },
});
const event = (e: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  body: { type: 'event_callback', event: e },
  event: e,
  ...extra,
});
const submission = (callbackId: string) => ({
  body: { type: 'view_submission', view: { callback_id: callbackId } },
  view: {},
});

describe('classify: what a request is, read once from its body', () => {
  it.each([
    [{ command: '/invoice' }, 'command', '/invoice'],
    [{ type: 'block_actions', actions: [{ action_id: 'stop_watch:12' }] }, 'action', 'stop_watch'],
    [
      { type: 'block_actions', actions: [{ action_id: 'refresh_invoice:1x' }] },
      'action',
      'refresh_invoice:1x',
    ],
    [{ type: 'event_callback', event: { type: 'link_shared' } }, 'event', 'link_shared'],
    [
      {
        type: 'event_callback',
        event: { type: 'function_executed', function: { callback_id: 'get_invoice' } },
      },
      'function',
      'get_invoice',
    ],
    [{ type: 'event_callback', event: { type: 'function_executed' } }, 'function', ''],
    [{ type: 'message_action', callback_id: 'check_payment' }, 'shortcut', 'check_payment'],
    [{ type: 'shortcut', callback_id: 'check_payment' }, 'other', 'shortcut'],
    [{ type: 'view_submission', view: { callback_id: 'payment_account' } }, 'view', 'payment_account'],
    [{ type: 'view_closed', view: { callback_id: 'payment_account' } }, 'other', 'view_closed'],
    [{}, 'other', ''],
    [{ type: 'block_actions' }, 'other', 'block_actions'],
    [{ type: 'block_actions', actions: [] }, 'action', ''],
    [
      { type: 'interactive_message', actions: [{ action_id: 'refresh_invoice' }] },
      'other',
      'interactive_message',
    ],
    [{ type: 'view_submission' }, 'view', ''],
  ])('%j is %s %s', (body, kind, name) => {
    expect(classify(body)).toEqual({ kind, name });
  });
});

describe('registerListeners: one router for every request', () => {
  it('sends the bot’s commands to theirs, with the request’s context', async () => {
    const r = routed();
    expect((await r.send(command('/invoice'))).calls).toEqual(['command /invoice']);
    expect((await r.send(command('/balance'))).calls).toEqual(['command /invoice', 'command /balance']);
    expect(r.contexts).toEqual([{ teamId: 'T1' }, { teamId: 'T1' }]);
  });

  it('sends a button to its handler, numbered or not, and only a trailing number is dropped', async () => {
    const r = routed();
    expect((await r.send(click('refresh_invoice'))).calls).toEqual(['button refresh_invoice']);
    expect((await r.send(click('stop_watch:12'))).calls).toEqual([
      'button refresh_invoice',
      'button stop_watch',
    ]);
    for (const id of ['refresh_invoice:1x', 'refresh_:1invoice', 'refresh_invoice:']) {
      expect(await routed().send(click(id))).toEqual({ calls: ['ack'], acks: 1 });
    }
  });

  it('sends the message shortcut to its handler, and nothing else that carries its callback id', async () => {
    const r = routed();
    expect((await r.send({ body: { type: 'message_action', callback_id: 'check_payment' } })).calls).toEqual([
      'shortcut',
    ]);
    const global = await routed().send({ body: { type: 'shortcut', callback_id: 'check_payment' } });
    expect(global).toEqual({ calls: ['ack'], acks: 1 });
  });

  it('sends the two events to theirs', async () => {
    const r = routed();
    await r.send(event({ type: 'link_shared' }));
    await r.send(event({ type: 'app_home_opened' }));
    expect(r.calls).toEqual(['event link_shared', 'event app_home_opened']);
  });

  it('acknowledges the workflow step itself when Bolt does not, then runs it; another function is unknown', async () => {
    const step = { type: 'function_executed', function: { callback_id: 'get_invoice' } };
    expect((await routed().send(event(step))).calls).toEqual(['ack', 'step']);
    expect(await routed().send({ ...event(step), ack: undefined })).toEqual({ calls: ['step'], acks: 0 });
    const other = await routed().send(
      event({ type: 'function_executed', function: { callback_id: 'other' } }),
    );
    expect(other).toEqual({ calls: ['ack'], acks: 1 });
  });

  it('sends what many workspaces route (buttons, a modal, the install’s events) to those routes, not to an installation', async () => {
    const r = routed((record) => ({
      'action connect_payment_account': record('connect'),
      'view payment_account': record('submit'),
      'event app_uninstalled': record('uninstalled'),
    }));
    await r.send(click('connect_payment_account'));
    await r.send(submission('payment_account'));
    await r.send(event({ type: 'app_uninstalled' }));
    expect(r.calls).toEqual(['connect', 'submit', 'uninstalled']);
    expect(r.contexts).toEqual([]);
  });

  it('acknowledges what nobody routes, runs no handler, and warns once per kind and name', async () => {
    const r = routed();
    for (const args of [
      command('/nope'),
      click('nope'),
      event({ type: 'reaction_added' }),
      submission('payment_account'),
    ])
      await r.send(args);
    await r.send(click('nope'));
    expect(r.calls).toEqual(['ack', 'ack', 'ack', 'ack', 'ack']);
    const warned = r.logs.lines.filter(
      (l) => l.msg === 'acknowledged a request this app has no listener for',
    );
    expect(warned.map((l) => `${l.type} ${l.name}`)).toEqual([
      'command /nope',
      'action nope',
      'event reaction_added',
      'view payment_account',
    ]);
  });

  it('acknowledges nothing it cannot (an event has no ack), and stops warning after 100 kinds', async () => {
    const r = routed();
    expect(await r.send({ ...event({ type: 'reaction_added' }), ack: undefined })).toEqual({
      calls: [],
      acks: 0,
    });
    for (let i = 0; i < 105; i += 1) await r.send(command(`/nope${i}`));
    const warned = r.logs.lines.filter(
      (l) => l.msg === 'acknowledged a request this app has no listener for',
    );
    expect(warned).toHaveLength(100);
  });
});
