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
import {
  ACTION_OPEN_PAYMENT_PAGE,
  ACTION_REFRESH,
  ACTION_SHARE,
  ACTION_STOP_WATCH,
  ACTION_WATCH,
  SHORTCUT_CHECK_PAYMENT,
} from '../domain/actions.js';
import { COMMANDS, type Command } from '../domain/commands.js';
import type { CommandHandler } from '../pipeline/ack-race.js';
import {
  actionListener,
  commandListener,
  eventListener,
  functionListener,
  shortcutListener,
} from '../pipeline/kinds.js';
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
import { lazily } from './lazily.js';
import { type Route, route, routeKey } from './router.js';
import { createCheckPaymentShortcut } from './shortcuts/check-payment.js';

/** The requests the bot serves besides its COMMANDS (src/domain/commands.ts): what its manifest can make Slack send. */
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
  command: Record<Command, Listener<CommandArgs>>;
  button: Record<(typeof BUTTONS)[number], Listener<ClickArgs>>;
  shortcut: Listener<ShortcutArgs>;
  event: { [T in (typeof EVENTS)[number]]: Listener<EventArgs<T>> };
  step: Listener<FunctionArgs>;
}

/**
 * The handlers of one installation's deps, each made the first time it is asked for: a request
 * builds its own handler only (src/listeners/lazily.ts), over the deps it was given.
 */
export function createHandlers(deps: ListenerDeps): Handlers {
  const command = (name: string, handler: CommandHandler) => commandListener(deps, name, handler);
  const button = (actionId: string, handler: ButtonHandler) =>
    actionListener<ButtonArgs>(deps, actionId, handler);
  return lazily<Handlers>({
    command: () =>
      lazily({
        '/balance': () => command('/balance', createBalanceCommand(deps)),
        '/invoice': () => command('/invoice', createInvoiceCommand(deps)),
      }),
    button: () =>
      lazily({
        [ACTION_REFRESH]: () => button(ACTION_REFRESH, createRefreshInvoiceAction(deps)),
        [ACTION_OPEN_PAYMENT_PAGE]: () => button(ACTION_OPEN_PAYMENT_PAGE, acknowledgeOpenPaymentPage),
        [ACTION_WATCH]: () => button(ACTION_WATCH, createWatchInvoiceAction(deps)),
        [ACTION_STOP_WATCH]: () => button(ACTION_STOP_WATCH, createStopWatchAction(deps)),
        [ACTION_SHARE]: () => button(ACTION_SHARE, createShareInvoiceAction(deps)),
      }),
    shortcut: () => shortcutListener(deps, SHORTCUT_CHECK_PAYMENT, createCheckPaymentShortcut(deps)),
    event: () =>
      lazily<Handlers['event']>({
        link_shared: () => eventListener(deps, 'link_shared', createLinkSharedEvent(deps)),
        app_home_opened: () => eventListener(deps, 'app_home_opened', createAppHomeOpened(deps)),
      }),
    step: () => functionListener(deps, FUNCTION_GET_INVOICE, createGetInvoiceStep(deps)),
  });
}

/** The handlers for a request's installation: one set for the one workspace, or per installation. */
export type HandlersOf = (context: Context) => Promise<Handlers>;

const own = (pick: (h: Handlers) => (args: never) => Promise<void>) => pick as (h: Handlers) => Route;

/** Which of an installation's handlers each of the bot's own requests goes to, by route key. */
const OWN_ROUTES: Readonly<Record<string, (h: Handlers) => Route>> = {
  ...Object.fromEntries(COMMANDS.map((c) => [`command ${c}`, own((h) => h.command[c])])),
  ...Object.fromEntries(BUTTONS.map((b) => [`action ${b}`, own((h) => h.button[b])])),
  [`shortcut ${SHORTCUT_CHECK_PAYMENT}`]: own((h) => h.shortcut),
  ...Object.fromEntries(EVENTS.map((e) => [`event ${e}`, own((h) => h.event[e])])),
  [`function ${FUNCTION_GET_INVOICE}`]: (h) => async (args) => {
    // Bolt acknowledges function_executed only for a listener registered with app.function.
    await (args as { ack?: () => Promise<void> }).ack?.();
    await h.step(args as unknown as FunctionArgs);
  },
};

/**
 * Routes of requests that are no installation's own work, by route key (`action …`, `view …`,
 * `event …`): many workspaces' payment account and install lifecycle (src/listeners/workspaces/),
 * each already in the request pipeline.
 */
export type MoreRoutes = Readonly<Record<string, Route>>;

/**
 * Every request through one router (src/listeners/router.ts): the bot's own to the handlers of
 * the request's installation, the rest to `more`, anything else acknowledged and warned about.
 */
export function registerListeners(
  app: App,
  deps: Pick<ListenerDeps, 'logger'>,
  handlersOf: HandlersOf,
  more: MoreRoutes = {},
): void {
  route(app, deps.logger, (request) => {
    const key = routeKey(request);
    const pick = OWN_ROUTES[key];
    if (pick) return async (args) => pick(await handlersOf(args.context))(args);
    return more[key];
  });
}
