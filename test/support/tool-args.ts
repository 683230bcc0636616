import type { MessageShortcut, SlackShortcutMiddlewareArgs } from '@slack/bolt';
import type { StepArgs } from '../../src/listeners/functions/get-invoice.js';
import { HOME_TEAM } from './bolt.js';

/** Arguments of the support tools' listeners (the message shortcut, the workflow step), as Bolt passes them. */

/** A message_action payload for a message, as Slack sends it. */
export function shortcutArgs(message: Record<string, unknown>, channel = 'C0SUPPORT') {
  const shortcut = {
    type: 'message_action',
    callback_id: 'check_payment',
    trigger_id: '1.2.3',
    message_ts: String(message.ts),
    response_url: 'https://hooks.slack.test/shortcut',
    message: { type: 'message', user: 'U0CUSTOMER', ...message },
    channel: { id: channel, name: 'support' },
    user: { id: 'U0AGENT', name: 'agent' },
    team: { id: HOME_TEAM, domain: 'home' },
    token: 't',
    action_ts: '1.2',
  } as unknown as MessageShortcut;
  let acked = 0;
  const args = {
    shortcut,
    body: shortcut,
    payload: shortcut,
    ack: async () => {
      acked += 1;
    },
  } as unknown as SlackShortcutMiddlewareArgs<MessageShortcut>;
  return { args, acks: () => acked };
}

/** A run of the Get invoice workflow step with `invoice` as its input, and what it completed or failed with. */
export function stepArgs(invoice: unknown) {
  const completed: unknown[] = [];
  const failed: unknown[] = [];
  const args = {
    inputs: { invoice },
    complete: async (a: unknown) => void completed.push(a),
    fail: async (a: unknown) => void failed.push(a),
  } as unknown as StepArgs;
  return { args, completed, failed };
}
