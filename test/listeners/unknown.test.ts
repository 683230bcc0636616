import { describe, expect, it } from 'vitest';
import { acknowledgeUnknown, type KnownRequests } from '../../src/listeners/unknown.js';
import { captureLogs } from '../support/bolt.js';

const known: KnownRequests = {
  commands: ['/invoice'],
  actions: ['refresh_invoice', /^share_invoice(:\d+)?$/],
  events: ['link_shared'],
  shortcuts: ['check_payment'],
  views: ['payment_account'],
};

async function run(
  body: Record<string, unknown>,
  middleware = acknowledgeUnknown(known, captureLogs().logger),
) {
  let acks = 0;
  let passed = false;
  await middleware({
    body,
    ack: async () => {
      acks += 1;
    },
    next: async () => {
      passed = true;
    },
  } as unknown as Parameters<typeof middleware>[0]);
  return { acks, passed };
}

describe('acknowledgeUnknown', () => {
  it.each<[string, Record<string, unknown>]>([
    ['a registered command', { command: '/invoice' }],
    ['a registered button', { type: 'block_actions', actions: [{ action_id: 'refresh_invoice' }] }],
    [
      'a click with one registered action among others',
      { type: 'block_actions', actions: [{ action_id: 'x' }, { action_id: 'refresh_invoice' }] },
    ],
    ['a registered event', { type: 'event_callback', event: { type: 'link_shared' } }],
    ['a registered message shortcut', { type: 'message_action', callback_id: 'check_payment' }],
    [
      'a numbered button matched by pattern',
      { type: 'block_actions', actions: [{ action_id: 'share_invoice:2' }] },
    ],
    ['a registered modal submission', { type: 'view_submission', view: { callback_id: 'payment_account' } }],
    ['a registered modal closed', { type: 'view_closed', view: { callback_id: 'payment_account' } }],
  ])('lets %s through to the listeners', async (_label, body) => {
    expect(await run(body)).toEqual({ acks: 0, passed: true });
  });

  it.each<[string, Record<string, unknown>]>([
    ['an unknown command', { command: '/refund' }],
    ['a button from an old message', { type: 'block_actions', actions: [{ action_id: 'approve_v1' }] }],
    ['an unknown message shortcut', { type: 'message_action', callback_id: 'other' }],
    ['a global shortcut', { type: 'shortcut', callback_id: 'check_payment' }],
    ['a modal submission', { type: 'view_submission', view: {} }],
    ['another modal submission', { type: 'view_submission', view: { callback_id: 'other' } }],
    [
      'a modal of a registered name as another kind',
      { type: 'message_action', callback_id: 'payment_account' },
    ],
    ['a payload without a type', {}],
    ['block actions without a list of actions', { type: 'block_actions', actions: 'refresh_invoice' }],
    ['a button whose id is not text', { type: 'block_actions', actions: [{ action_id: 7 }, null] }],
    ['an event that names no type', { type: 'event_callback' }],
    ['an event with a registered name but as another kind', { type: 'shortcut', callback_id: 'link_shared' }],
  ])('acknowledges %s at once, without the listeners', async (_label, body) => {
    expect(await run(body)).toEqual({ acks: 1, passed: false });
  });

  it('warns once per kind and name, not once per request', async () => {
    const logs = captureLogs();
    const middleware = acknowledgeUnknown(known, logs.logger);
    for (let i = 0; i < 3; i += 1)
      await run({ type: 'block_actions', actions: [{ action_id: 'old' }] }, middleware);
    await run({ type: 'view_submission' }, middleware);
    expect(logs.lines.map((l) => [l.level, l.msg, l.type, l.name])).toEqual([
      ['warn', 'acknowledged a request this app has no listener for', 'block_actions', 'old'],
      ['warn', 'acknowledged a request this app has no listener for', 'view_submission', ''],
    ]);
  });

  it('stops warning after 100 distinct unknown requests, and keeps acknowledging', async () => {
    const logs = captureLogs();
    const middleware = acknowledgeUnknown(known, logs.logger);
    for (let i = 0; i < 105; i += 1) {
      expect(await run({ command: `/c${i}` }, middleware)).toEqual({ acks: 1, passed: false });
    }
    expect(logs.lines).toHaveLength(100);
  });

  it('names what it warns about: kind and name, or the kind alone', async () => {
    const logs = captureLogs();
    const middleware = acknowledgeUnknown(known, logs.logger);
    await run({ type: 'shortcut', callback_id: 'global_one' }, middleware);
    await run({ type: 'event_callback', event: { type: 'reaction_added' } }, middleware);
    await run({ type: 'block_actions', actions: [{ action_id: 'a' }, { action_id: 'b' }] }, middleware);
    await run({ type: 'view_submission' }, middleware);
    await run({}, middleware);
    expect(logs.lines.map((l) => [l.type, l.name])).toEqual([
      ['shortcut', 'global_one'],
      ['event', 'reaction_added'],
      ['block_actions', 'a,b'],
      ['view_submission', ''],
      ['unknown', ''],
    ]);
  });

  it('copes with a request that has nothing to acknowledge', async () => {
    const logs = captureLogs();
    const middleware = acknowledgeUnknown(known, logs.logger);
    let passed = false;
    await middleware({
      body: { type: 'event_callback', event: { type: 'reaction_added' } },
      ack: 'not a function',
      next: async () => {
        passed = true;
      },
    } as unknown as Parameters<typeof middleware>[0]);
    expect(passed).toBe(false);
    expect(logs.lines).toHaveLength(1);
  });
});
