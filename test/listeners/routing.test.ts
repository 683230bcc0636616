import type { App, Middleware } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { BUTTONS, COMMANDS, type Handlers, registerListeners } from '../../src/listeners/index.js';
import { captureLogs } from '../support/bolt.js';

/**
 * The two global middlewares registerListeners installs (the unknown-request guard, then the
 * router), driven with the arguments Bolt would hand them, and handlers that only record.
 */
function routed(more: Parameters<typeof registerListeners>[3] = {}) {
  const middlewares: Middleware<never>[] = [];
  const app = { use: (m: Middleware<never>) => middlewares.push(m) } as unknown as App;
  const calls: string[] = [];
  const record = (name: string) => async (args: unknown) => {
    calls.push(name);
    expect(args).toBeDefined();
  };
  const handlers: Handlers = {
    command: Object.fromEntries(COMMANDS.map((c) => [c, record(`command ${c}`)])) as Handlers['command'],
    button: Object.fromEntries(BUTTONS.map((b) => [b, record(`button ${b}`)])) as Handlers['button'],
    shortcut: record('shortcut'),
    event: { link_shared: record('event link_shared'), app_home_opened: record('event app_home_opened') },
    step: record('step'),
  };
  const contexts: unknown[] = [];
  registerListeners(
    app,
    { logger: captureLogs().logger },
    async (context) => {
      contexts.push(context);
      return handlers;
    },
    more,
  );
  expect(middlewares).toHaveLength(2);

  /** One request through both middlewares: what was called, whether it went on, how often it was acked. */
  async function send(args: Record<string, unknown>) {
    let acks = 0;
    let passedOn = false;
    const full = {
      context: { teamId: 'T1' },
      ack: async () => {
        acks += 1;
        calls.push('ack');
      },
      ...args,
      next: async () => {
        passedOn = true;
      },
    };
    const [guard, router] = middlewares;
    await (guard as (a: unknown) => Promise<void>)({
      ...full,
      next: () => (router as (a: unknown) => Promise<void>)(full),
    });
    return { calls: [...calls], acks, passedOn };
  }
  return { send, contexts, calls };
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

describe('registerListeners routes each request to its installation’s handler', () => {
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
    // Not one of its buttons: acknowledged as unknown, no handler.
    for (const id of ['refresh_invoice:1x', 'refresh_:1invoice', 'refresh_invoice:']) {
      const sent = await routed().send(click(id));
      expect(sent).toMatchObject({ calls: ['ack'], acks: 1, passedOn: false });
    }
  });

  it('sends the message shortcut to its handler, and nothing else that carries its callback id', async () => {
    const r = routed();
    const shortcut = { body: { type: 'message_action', callback_id: 'check_payment' }, shortcut: {} };
    expect((await r.send(shortcut)).calls).toEqual(['shortcut']);
    // A global shortcut with the same id is not the message shortcut; another message shortcut neither.
    const global = await routed({ shortcuts: ['check_payment'] }).send({
      body: { type: 'shortcut', callback_id: 'check_payment' },
      shortcut: {},
    });
    expect(global).toMatchObject({ calls: ['ack'], passedOn: false });
    const other = await routed({ shortcuts: ['other'] }).send({
      body: { type: 'message_action', callback_id: 'other' },
      shortcut: {},
    });
    expect(other).toMatchObject({ calls: [], passedOn: true });
  });

  it('sends the two events to theirs', async () => {
    const r = routed();
    await r.send(event({ type: 'link_shared' }));
    await r.send(event({ type: 'app_home_opened' }));
    expect(r.calls).toEqual(['event link_shared', 'event app_home_opened']);
  });

  it('acknowledges the workflow step itself when Bolt does not, then runs it; another function goes on', async () => {
    const r = routed();
    const step = { type: 'function_executed', function: { callback_id: 'get_invoice' } };
    expect((await r.send(event(step))).calls).toEqual(['ack', 'step']);
    // Without an ack of Bolt's (a listener registered with app.function acks it): the step still runs.
    const bare = routed();
    const sent = await bare.send({ ...event(step), ack: undefined });
    expect(sent).toMatchObject({ calls: ['step'], passedOn: false });
    const other = await routed().send(
      event({ type: 'function_executed', function: { callback_id: 'other' } }),
    );
    expect(other).toMatchObject({ calls: [], passedOn: true });
    // One that names no function at all is not the step either.
    expect(await routed().send(event({ type: 'function_executed' }))).toMatchObject({
      calls: [],
      passedOn: true,
    });
  });

  it('passes what other parts of the app listen for on to them, untouched', async () => {
    const r = routed({
      commands: ['/extra'],
      actions: ['connect_payment_account'],
      events: ['app_uninstalled'],
      views: ['payment_account'],
    });
    for (const args of [
      command('/extra'),
      click('connect_payment_account'),
      event({ type: 'app_uninstalled' }),
      { body: { type: 'view_submission', view: { callback_id: 'payment_account' } }, view: {} },
    ]) {
      expect(await r.send(args)).toMatchObject({ calls: [], acks: 0, passedOn: true });
    }
    // An event of another kind, carrying no function, is not a step.
    expect(await r.send(event({ type: 'app_uninstalled', function: undefined }))).toMatchObject({
      calls: [],
      passedOn: true,
    });
  });

  it('acknowledges what nobody listens for, and runs no handler', async () => {
    for (const args of [
      command('/nope'),
      click('nope'),
      event({ type: 'reaction_added' }),
      { body: { type: 'view_submission', view: { callback_id: 'payment_account' } }, view: {} },
    ]) {
      expect(await routed().send(args)).toMatchObject({ calls: ['ack'], acks: 1, passedOn: false });
    }
  });
});
