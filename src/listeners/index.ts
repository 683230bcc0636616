import type {
  AllMiddlewareArgs,
  App,
  BlockAction,
  ButtonAction,
  Context,
  MessageShortcut,
  SlackActionMiddlewareArgs,
  SlackCommandMiddlewareArgs,
  SlackEventMiddlewareArgs,
  SlackShortcutMiddlewareArgs,
} from '@slack/bolt';
import type { CommandHandler } from '../pipeline/ack-race.js';
import {
  actionListener,
  commandListener,
  eventListener,
  functionListener,
  shortcutListener,
} from '../pipeline/kinds.js';
import {
  ACTION_OPEN_PAYMENT_PAGE,
  ACTION_REFRESH,
  ACTION_STOP_WATCH,
  ACTION_WATCH,
} from '../views/invoice.js';
import { ACTION_SHARE, SHORTCUT_CHECK_PAYMENT } from '../views/shortcut.js';
import type { ButtonArgs, ButtonHandler } from './actions/click.js';
import { acknowledgeOpenPaymentPage } from './actions/open-payment-page.js';
import { createRefreshInvoiceAction } from './actions/refresh-invoice.js';
import { createShareInvoiceAction } from './actions/share-invoice.js';
import { createStopWatchAction } from './actions/stop-watch.js';
import { createWatchInvoiceAction } from './actions/watch-invoice.js';
import { createBalanceCommand } from './commands/balance.js';
import { createInvoiceCommand } from './commands/invoice.js';
import type { ListenerDeps } from './deps.js';
import { createAppHomeOpened } from './events/app-home-opened.js';
import { createLinkSharedEvent } from './events/link-shared.js';
import { createGetInvoiceStep, FUNCTION_GET_INVOICE, type StepArgs } from './functions/get-invoice.js';
import { createCheckPaymentShortcut } from './shortcuts/check-payment.js';
import { acknowledgeUnknown, type KnownRequests } from './unknown.js';

/** An action id alone, or with the `:<n>` suffix that tells a message's numbered buttons apart. */
export const numbered = (actionId: string) => new RegExp(`^${actionId}(:\\d+)?$`);

/** The requests the bot serves: what its manifest can make Slack send. */
export const COMMANDS = ['/balance', '/invoice'] as const;
export const BUTTONS = [
  ACTION_REFRESH,
  ACTION_OPEN_PAYMENT_PAGE,
  ACTION_WATCH,
  ACTION_STOP_WATCH,
  ACTION_SHARE,
] as const;
export const EVENTS = ['link_shared', 'app_home_opened'] as const;

type Listener<A> = (args: A) => Promise<void>;
export type CommandArgs = SlackCommandMiddlewareArgs & AllMiddlewareArgs;
export type ClickArgs = SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs;
export type ShortcutArgs = SlackShortcutMiddlewareArgs<MessageShortcut> & AllMiddlewareArgs;
export type EventArgs<T extends (typeof EVENTS)[number]> = SlackEventMiddlewareArgs<T> & AllMiddlewareArgs;
export type FunctionArgs = StepArgs & AllMiddlewareArgs;

/**
 * Every request's handler, each already wrapped in the request pipeline (tracked, and for
 * commands the ack race). One set serves one installation: built from its `ListenerDeps`.
 */
export interface Handlers {
  command: Record<(typeof COMMANDS)[number], Listener<CommandArgs>>;
  button: Record<(typeof BUTTONS)[number], Listener<ClickArgs>>;
  shortcut: Listener<ShortcutArgs>;
  event: { [T in (typeof EVENTS)[number]]: Listener<EventArgs<T>> };
  step: Listener<FunctionArgs>;
}

/** The handlers of one installation's deps. */
export function createHandlers(deps: ListenerDeps): Handlers {
  const command = (name: string, handler: CommandHandler) => commandListener(deps, name, handler);
  const button = (actionId: string, handler: ButtonHandler) =>
    actionListener<ButtonArgs>(deps, actionId, handler);
  return {
    command: {
      '/balance': command('/balance', createBalanceCommand(deps)),
      '/invoice': command('/invoice', createInvoiceCommand(deps)),
    },
    button: {
      [ACTION_REFRESH]: button(ACTION_REFRESH, createRefreshInvoiceAction(deps)),
      [ACTION_OPEN_PAYMENT_PAGE]: button(ACTION_OPEN_PAYMENT_PAGE, acknowledgeOpenPaymentPage),
      [ACTION_WATCH]: button(ACTION_WATCH, createWatchInvoiceAction(deps)),
      [ACTION_STOP_WATCH]: button(ACTION_STOP_WATCH, createStopWatchAction(deps)),
      [ACTION_SHARE]: button(ACTION_SHARE, createShareInvoiceAction(deps)),
    },
    shortcut: shortcutListener(deps, SHORTCUT_CHECK_PAYMENT, createCheckPaymentShortcut(deps)),
    event: {
      link_shared: eventListener(deps, 'link_shared', createLinkSharedEvent(deps)),
      app_home_opened: eventListener(deps, 'app_home_opened', createAppHomeOpened(deps)),
    },
    step: functionListener(deps, FUNCTION_GET_INVOICE, createGetInvoiceStep(deps)),
  };
}

/** The handlers for a request's installation: one set for the one workspace, or per installation. */
export type HandlersOf = (context: Context) => Promise<Handlers>;

/** Requests some other part of the app registers listeners for (many-workspaces mode's own). */
export type MoreRequests = Partial<KnownRequests>;

const either = (names: readonly string[]) => new RegExp(`^(?:${names.join('|')})$`);
const isButton = (name: string): name is (typeof BUTTONS)[number] =>
  (BUTTONS as readonly string[]).includes(name);

/**
 * The one place that maps Slack's commands, actions, shortcuts, events and workflow steps to
 * their handlers. One Bolt listener per kind of request, dispatching by name to the request's
 * installation's handlers: Bolt does work per registered listener on every request, so fewer
 * listeners is less of it. What is registered here is also what `acknowledgeUnknown` lets through.
 */
export function registerListeners(
  app: App,
  deps: Pick<ListenerDeps, 'logger'>,
  handlersOf: HandlersOf,
  more: MoreRequests = {},
): void {
  const numberedButtons = BUTTONS.map(numbered);
  app.use(
    acknowledgeUnknown(
      {
        commands: [...COMMANDS, ...(more.commands ?? [])],
        actions: [...numberedButtons, ...(more.actions ?? [])],
        events: [...EVENTS, 'function_executed', ...(more.events ?? [])],
        shortcuts: [SHORTCUT_CHECK_PAYMENT, ...(more.shortcuts ?? [])],
        views: [...(more.views ?? [])],
      },
      deps.logger,
    ),
  );

  app.command(either(COMMANDS), async (args) => {
    const name = args.command.command as (typeof COMMANDS)[number];
    await (await handlersOf(args.context)).command[name](args);
  });
  app.action<BlockAction<ButtonAction>>(either(BUTTONS.map((id) => `${id}(?::\\d+)?`)), async (args) => {
    const name = args.action.action_id.replace(/:\d+$/, '');
    if (isButton(name)) await (await handlersOf(args.context)).button[name](args);
  });
  app.shortcut<MessageShortcut>(
    { callback_id: SHORTCUT_CHECK_PAYMENT, type: 'message_action' },
    async (args) => (await handlersOf(args.context)).shortcut(args),
  );
  app.event(either(EVENTS), async (args) => {
    const { event } = await handlersOf(args.context);
    if (args.event.type === 'link_shared') await event.link_shared(args as EventArgs<'link_shared'>);
    else await event.app_home_opened(args as EventArgs<'app_home_opened'>);
  });
  app.function(FUNCTION_GET_INVOICE, async (args) =>
    (await handlersOf(args.context)).step(args as unknown as FunctionArgs),
  );
}
