import type {
  AllMiddlewareArgs,
  AnyMiddlewareArgs,
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

const isButton = (name: string): name is (typeof BUTTONS)[number] =>
  (BUTTONS as readonly string[]).includes(name);
const isCommand = (name: string): name is (typeof COMMANDS)[number] =>
  (COMMANDS as readonly string[]).includes(name);

type Route = (handlers: Handlers) => (args: never) => Promise<void>;

/** Which of an installation's handlers a request is for, if it is one of the bot's own. */
function routeOf(args: AnyMiddlewareArgs): Route | undefined {
  const body = args.body as unknown as Record<string, unknown>;
  if ('command' in args) {
    const name = args.command.command;
    return isCommand(name) ? (h) => h.command[name] : undefined;
  }
  if (body.type === 'block_actions' && 'action' in args) {
    const name = String((args.action as { action_id?: unknown }).action_id ?? '').replace(/:\d+$/, '');
    return isButton(name) ? (h) => h.button[name] : undefined;
  }
  if (body.type === 'message_action' && body.callback_id === SHORTCUT_CHECK_PAYMENT) return (h) => h.shortcut;
  if (!('event' in args)) return undefined;
  const event = args.event as { type?: string; function?: { callback_id?: string } };
  if (event.type === 'link_shared') return (h) => h.event.link_shared;
  if (event.type === 'app_home_opened') return (h) => h.event.app_home_opened;
  if (event.type === 'function_executed' && event.function?.callback_id === FUNCTION_GET_INVOICE)
    return (h) => async (step: FunctionArgs) => {
      // Bolt acknowledges function_executed only for a listener registered with app.function.
      await (step as unknown as { ack?: () => Promise<void> }).ack?.();
      await h.step(step);
    };
  return undefined;
}

/**
 * The one place that maps Slack's commands, actions, shortcuts, events and workflow steps to
 * their handlers: one global middleware that routes each request by kind and name to its
 * installation's handlers. No Bolt listener is registered for them: Bolt copies a request's
 * arguments for every registered listener on every request, which under load was most of the
 * bot's garbage (issue 18). What is not the bot's own goes on to the listeners `more` names
 * (many-workspaces mode's), or is acknowledged and warned about by `acknowledgeUnknown`.
 */
export function registerListeners(
  app: App,
  deps: Pick<ListenerDeps, 'logger'>,
  handlersOf: HandlersOf,
  more: MoreRequests = {},
): void {
  app.use(
    acknowledgeUnknown(
      {
        commands: [...COMMANDS, ...(more.commands ?? [])],
        actions: [...BUTTONS.map(numbered), ...(more.actions ?? [])],
        events: [...EVENTS, 'function_executed', ...(more.events ?? [])],
        shortcuts: [SHORTCUT_CHECK_PAYMENT, ...(more.shortcuts ?? [])],
        views: [...(more.views ?? [])],
      },
      deps.logger,
    ),
  );
  app.use(async (args) => {
    const route = routeOf(args);
    if (route) await route(await handlersOf(args.context))(args as never);
    else await args.next();
  });
}
