import { describe, expect, it } from 'vitest';
import {
  ACTION_OPEN_PAYMENT_PAGE,
  ACTION_REFRESH,
  ACTION_WATCH,
  SHORTCUT_CHECK_PAYMENT,
} from '../../src/domain/actions.js';
import { Inflight } from '../../src/inflight.js';
import type {
  ClickArgs,
  CommandArgs,
  EventArgs,
  FunctionArgs,
  ShortcutArgs,
} from '../../src/listeners/args.js';
import { FUNCTION_GET_INVOICE } from '../../src/listeners/functions/get-invoice.js';
import { notConnectedHandlers } from '../../src/listeners/index.js';
import { buttonArgs, captureLogs, commandArgs, recordingResponseUrls } from '../support/bolt.js';

/** A workspace that installed the app and has not connected its payment account yet. */
function handlers() {
  const logs = captureLogs();
  const homes: string[] = [];
  const set = notConnectedHandlers(
    { logger: logs.logger, inflight: new Inflight(), fastPathMs: 1500, responseUrls: recordingResponseUrls },
    'U0INSTALLER',
    async ({ event }) => {
      homes.push(event.user);
    },
  );
  return { set, logs, homes };
}

const NOT_CONNECTED = 'The payment account is not connected';

describe('a workspace whose payment account is not connected', () => {
  it.each(['/balance', '/invoice'] as const)(
    'answers %s privately in the ack, naming who can connect it',
    async (name) => {
      const { set, logs } = handlers();
      const { args, rec } = commandArgs({ command: name, text: 'anything' });
      await set.command[name](args as unknown as CommandArgs);
      expect(rec.acks).toHaveLength(1);
      expect(rec.acks[0]).toMatchObject({ response_type: 'ephemeral' });
      expect(JSON.stringify(rec.acks[0])).toContain(NOT_CONNECTED);
      expect(JSON.stringify(rec.acks[0])).toContain('<@U0INSTALLER>');
      expect(logs.lines.find((l) => l.name === name)).toMatchObject({ outcome: 'not_connected' });
    },
  );

  it.each([ACTION_REFRESH, ACTION_WATCH] as const)(
    'answers a click on %s beside the message, leaving it alone',
    async (actionId) => {
      const { set, logs } = handlers();
      const { args, rec } = buttonArgs('x', { actionId });
      await set.action[actionId](args as unknown as ClickArgs);
      expect(rec.acks).toEqual([undefined]);
      expect(rec.responses).toHaveLength(1);
      expect(rec.responses[0]).toMatchObject({ response_type: 'ephemeral', replace_original: false });
      expect(JSON.stringify(rec.responses[0])).toContain(NOT_CONNECTED);
      expect(logs.lines.find((l) => l.name === actionId)).toMatchObject({
        outcome: 'not_connected',
        delivery: 'response_url',
      });
    },
  );

  it('only acknowledges the payment page button: it is a link Slack opens', async () => {
    const { set, logs } = handlers();
    const { args, rec } = buttonArgs('x', { actionId: ACTION_OPEN_PAYMENT_PAGE });
    await set.action[ACTION_OPEN_PAYMENT_PAGE](args as unknown as ClickArgs);
    expect(rec.acks).toEqual([undefined]);
    expect(rec.responses).toEqual([]);
    expect(logs.lines.find((l) => l.name === ACTION_OPEN_PAYMENT_PAGE)).toMatchObject({ outcome: 'ok' });
  });

  it('acknowledges a click with no response_url (the App Home) and posts nothing', async () => {
    const { set } = handlers();
    const { args, rec } = buttonArgs('x', { actionId: ACTION_REFRESH });
    const noUrl = { ...args, body: { ...args.body, response_url: undefined } };
    await set.action[ACTION_REFRESH](noUrl as unknown as ClickArgs);
    expect(rec.acks).toEqual([undefined]);
    expect(rec.responses).toEqual([]);
  });

  it('answers the message shortcut privately through its response_url', async () => {
    const { set, logs } = handlers();
    const { args, rec } = buttonArgs('x');
    let acked = 0;
    const shortcut = {
      ack: async () => {
        acked += 1;
      },
      shortcut: { response_url: args.body.response_url, user: { id: 'U0A' }, channel: { id: 'C0' } },
      body: { user: { id: 'U0A' }, channel: { id: 'C0' } },
    };
    await set.shortcut[SHORTCUT_CHECK_PAYMENT](shortcut as unknown as ShortcutArgs);
    expect(acked).toBe(1);
    expect(JSON.stringify(rec.responses[0])).toContain(NOT_CONNECTED);
    expect(rec.responses[0]).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    expect(logs.lines.find((l) => l.kind === 'shortcut')).toMatchObject({ outcome: 'not_connected' });
  });

  it('leaves a pasted payment link as Slack shows it, and says so only at debug', async () => {
    const { set, logs } = handlers();
    await set.event.link_shared({
      event: { user: 'U0P', channel: 'C0' },
      body: { team_id: 'T0' },
    } as unknown as EventArgs<'link_shared'>);
    expect(logs.lines.find((l) => l.name === 'link_shared')).toMatchObject({
      outcome: 'not_connected',
      level: 'debug',
    });
  });

  it('publishes the Home tab (the account alone) when it is opened, and nothing for its other tabs', async () => {
    const { set, homes, logs } = handlers();
    const opened = (tab: string) =>
      ({
        event: { user: 'U0MEMBER', tab, channel: 'D0' },
        body: { team_id: 'T0' },
      }) as unknown as EventArgs<'app_home_opened'>;
    await set.event.app_home_opened(opened('messages'));
    expect(homes).toEqual([]);
    await set.event.app_home_opened(opened('home'));
    expect(homes).toEqual(['U0MEMBER']);
    expect(logs.lines.filter((l) => l.name === 'app_home_opened').map((l) => l.outcome)).toEqual([
      'ok',
      'not_connected',
    ]);
  });

  it('fails the workflow step with a line its author understands', async () => {
    const { set, logs } = handlers();
    const failures: string[] = [];
    await set.function[FUNCTION_GET_INVOICE]({
      fail: async ({ error }: { error: string }) => {
        failures.push(error);
      },
      body: { team_id: 'T0' },
    } as unknown as FunctionArgs);
    expect(failures).toEqual([
      'The payment account is not connected: the installer or a workspace admin connects it from the app’s Home tab',
    ]);
    expect(logs.lines.find((l) => l.kind === 'function')).toMatchObject({ outcome: 'not_connected' });
  });
});
