import type { MessageShortcut, SlackShortcutMiddlewareArgs } from '@slack/bolt';
import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import { type ButtonValueKind, parseButtonValue } from '../../src/listeners/actions/button-value.js';
import type { ButtonHandler } from '../../src/listeners/actions/click.js';
import { createRefreshInvoiceAction } from '../../src/listeners/actions/refresh-invoice.js';
import { createShareInvoiceAction } from '../../src/listeners/actions/share-invoice.js';
import { createStopWatchAction } from '../../src/listeners/actions/stop-watch.js';
import { createWatchInvoiceAction } from '../../src/listeners/actions/watch-invoice.js';
import { createInvoiceCommand } from '../../src/listeners/commands/invoice.js';
import type { ListenerDeps } from '../../src/listeners/deps.js';
import { createAppHomeOpened } from '../../src/listeners/events/app-home-opened.js';
import { createLinkSharedEvent } from '../../src/listeners/events/link-shared.js';
import type { HomeClient } from '../../src/listeners/home.js';
import { createCheckPaymentShortcut } from '../../src/listeners/shortcuts/check-payment.js';
import { actionListener, commandListener } from '../../src/pipeline/kinds.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { buttonArgs, captureLogs, commandArgs, HOME_TEAM, linkSharedArgs } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { useSandbox } from '../support/use-sandbox.js';

/**
 * Issue 18 §2: every signed click gets an answer. A button value the bot did not write (any
 * JSON Slack may deliver) is answered "That button no longer works", privately, with the clicked
 * message left alone, nothing called, and a warning that does not carry the value; every value
 * the bot does write is read back.
 */
const env = useSandbox();
const OPEN = DEMO_INVOICE_IDS.open;

beforeEach(async () => {
  await emptyWork(env.store);
});

const BUTTONS: Record<string, { kind: ButtonValueKind; create: (deps: ListenerDeps) => ButtonHandler }> = {
  refresh_invoice: { kind: 'invoice', create: createRefreshInvoiceAction },
  watch_invoice: { kind: 'placed', create: createWatchInvoiceAction },
  stop_watch: { kind: 'watch', create: createStopWatchAction },
  share_invoice: { kind: 'placed', create: createShareInvoiceAction },
};

/** Clicks `actionId` carrying `value` (anything at all) through the real listener; what the clicker saw and the log. */
async function click(actionId: string, value: unknown) {
  const button = BUTTONS[actionId.replace(/:\d+$/, '')];
  if (!button) throw new Error(`no handler for ${actionId}`);
  const logs = captureLogs();
  const deps = env.deps({ logger: logs.logger });
  const { args, rec } = buttonArgs('placeholder', { actionId });
  Object.assign(args.action, { value });
  await actionListener(deps, actionId, button.create(deps))(args);
  const line = logs.lines.find((l) => l.msg === `action ${actionId}`);
  return { responses: rec.responses, outcome: line?.outcome, logs };
}

/** Values the bot never writes: every JSON type, and strings of almost the right shape. */
const WRONG_SHAPES = [
  '',
  ' ',
  'w-1',
  '../balance',
  OPEN.slice(0, 30),
  ` ${OPEN}`,
  `${OPEN} `,
  `${OPEN} 1700000000.000100 extra`,
  `${OPEN} not-a-ts`,
  `${OPEN}\n1700000000.000100`,
  OPEN.toUpperCase().replace(/-/g, '_'),
];
const anyValue = fc.oneof(
  fc.jsonValue(),
  fc.constant(undefined),
  fc.constantFrom(...WRONG_SHAPES),
  fc.string(),
);

describe.each(Object.entries(BUTTONS))('%s with a value the bot did not write', (actionId, { kind }) => {
  it('answers "that button no longer works", privately, leaving the message and everything else alone', async () => {
    await fc.assert(
      fc.asyncProperty(anyValue, async (value) => {
        fc.pre(parseButtonValue(kind, value) === undefined);
        const { responses, outcome, logs } = await click(actionId, value);
        expect(outcome).toBe('stale_button');
        expect(responses).toHaveLength(1);
        expect(responses[0]).toMatchObject({ response_type: 'ephemeral', replace_original: false });
        expect(visibleText(responses[0])).toBe(
          ':warning: *That button no longer works*\nRun `/invoice &lt;id&gt;` again for a fresh card.',
        );
        expect(env.sandbox.requests).toEqual([]);
        expect(env.poster.calls).toEqual([]);
        const warning = logs.lines.find((l) => l.level === 'warn');
        expect(warning).toMatchObject({ msg: 'a button value the bot did not write', action: actionId });
        expect(Object.keys(warning ?? {})).not.toContain('value');
      }),
      { numRuns: 60 },
    );
  });

  it('keeps the value itself out of every log line', async () => {
    const marker = 'forged-value-9d1c7f';
    for (const value of [marker, { id: marker }, [marker]]) {
      const { outcome, logs } = await click(actionId, value);
      expect(outcome).toBe('stale_button');
      expect(logs.raw.join('')).not.toContain(marker);
    }
  });
});

describe('parseButtonValue', () => {
  const WATCH = '0c1d2e3f-4a5b-4c6d-8e7f-901a2b3c4d5e';
  it.each<[ButtonValueKind, string]>([
    ['placed', `${DEMO_INVOICE_IDS.open} 1700000000.000100 more`],
    ['placed', `${DEMO_INVOICE_IDS.open} not-a-ts`],
    ['watch', `x${WATCH}`],
    ['watch', `${WATCH}x`],
  ])('refuses a %s value with anything around what the bot writes: %j', (kind, value) => {
    expect(parseButtonValue(kind, value)).toBeUndefined();
  });

  it('reads what the bot writes', () => {
    expect(parseButtonValue('watch', WATCH)).toBe(WATCH);
    expect(parseButtonValue('placed', `${DEMO_INVOICE_IDS.open} 1700000000.000100`)).toEqual({
      id: DEMO_INVOICE_IDS.open,
      threadTs: '1700000000.000100',
    });
  });
});

describe('the values the bot writes', () => {
  /** Every button value in a message or view, with its action id. */
  const buttonsIn = (message: unknown): { actionId: string; value: string }[] => {
    const found: { actionId: string; value: string }[] = [];
    const visit = (node: unknown): void => {
      if (Array.isArray(node)) for (const child of node) visit(child);
      else if (node && typeof node === 'object') {
        const element = node as { type?: unknown; action_id?: unknown; value?: unknown };
        if (element.type === 'button' && typeof element.value === 'string')
          found.push({ actionId: String(element.action_id), value: element.value });
        for (const child of Object.values(node)) visit(child);
      }
    };
    visit(message);
    return found;
  };

  it('are read back on every button of every card, list, unfurl, shortcut answer and App Home', async () => {
    const deps = env.deps();
    const invoiceCommand = async (text: string) => {
      const { args, rec } = commandArgs({ command: '/invoice', text });
      await commandListener(deps, '/invoice', createInvoiceCommand(deps))(args);
      return rec.acks[0] ?? rec.responses[0];
    };
    const card = await invoiceCommand(OPEN);
    await invoiceCommand(`watch ${OPEN}`);
    const list = await invoiceCommand('watching');
    const live = env.poster.messages[0];

    const shortcutAnswers: unknown[] = [];
    const shortcut = {
      type: 'message_action',
      callback_id: 'check_payment',
      response_url: 'https://hooks.slack.test/shortcut',
      message: { type: 'message', ts: '1700000000.000500', text: OPEN },
      channel: { id: 'C0SUPPORT', name: 'support' },
      user: { id: 'U0AGENT', team_id: HOME_TEAM },
      team: { id: HOME_TEAM },
    } as unknown as MessageShortcut;
    await createCheckPaymentShortcut({
      ...deps,
      responseUrls: { post: async (_url, message) => void shortcutAnswers.push(message) },
    })({ shortcut, ack: async () => undefined } as unknown as SlackShortcutMiddlewareArgs<MessageShortcut>);

    const { args: pasted, unfurls } = linkSharedArgs([`${env.sandbox.payUrl}/pay/${OPEN}`]);
    await createLinkSharedEvent(deps)(pasted);

    const homes: unknown[] = [];
    const client: HomeClient = { views: { publish: async (a) => void homes.push(a) } };
    await createAppHomeOpened(deps)({
      event: { type: 'app_home_opened', user: 'U0ASKER', channel: 'D0HOME', tab: 'home', event_ts: '1.2' },
      body: { team_id: HOME_TEAM },
      client,
    } as never);

    const written = buttonsIn([card, list, live, shortcutAnswers, unfurls, homes]);
    expect(new Set(written.map((b) => b.actionId.replace(/:\d+$/, '')))).toEqual(
      new Set(Object.keys(BUTTONS)),
    );
    for (const { actionId, value } of written) {
      const button = BUTTONS[actionId.replace(/:\d+$/, '')];
      expect(button && parseButtonValue(button.kind, value), `${actionId} ${value}`).toBeDefined();
      const { outcome, responses } = await click(actionId, value);
      expect(outcome, actionId).not.toBe('stale_button');
      expectValidMessage(responses[0]);
    }
  });

  it('reads the shortcut’s `<id> <thread ts>` and a card’s plain id; a watch id only as the store writes it', () => {
    expect(parseButtonValue('placed', `${OPEN} 1700000000.000100`)).toEqual({
      id: OPEN,
      threadTs: '1700000000.000100',
    });
    expect(parseButtonValue('placed', OPEN.toUpperCase())).toEqual({ id: OPEN, threadTs: undefined });
    expect(parseButtonValue('invoice', `${OPEN} 1700000000.000100`)).toBeUndefined();
    for (const ts of ['x1700000000.000100', '1700000000.000100x', '1700000000', '.5'])
      expect(parseButtonValue('placed', `${OPEN} ${ts}`)).toBeUndefined();
    const watchId = crypto.randomUUID();
    expect(parseButtonValue('watch', watchId)).toBe(watchId);
    expect(parseButtonValue('watch', watchId.toUpperCase())).toBeUndefined();
  });
});
