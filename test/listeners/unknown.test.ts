import { describe, expect, it } from 'vitest';
import { acknowledgeUnknown, type KnownRequests } from '../../src/listeners/unknown.js';
import { captureLogs } from '../support/bolt.js';

const known: KnownRequests = {
  commands: ['/invoice'],
  actions: ['refresh_invoice'],
  events: ['link_shared'],
  shortcuts: ['check_payment'],
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
  ])('lets %s through to the listeners', async (_label, body) => {
    expect(await run(body)).toEqual({ acks: 0, passed: true });
  });

  it.each<[string, Record<string, unknown>]>([
    ['an unknown command', { command: '/refund' }],
    ['a button from an old message', { type: 'block_actions', actions: [{ action_id: 'approve_v1' }] }],
    ['an unknown message shortcut', { type: 'message_action', callback_id: 'other' }],
    ['a global shortcut', { type: 'shortcut', callback_id: 'check_payment' }],
    ['a modal submission', { type: 'view_submission', view: {} }],
    ['a payload without a type', {}],
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
});
