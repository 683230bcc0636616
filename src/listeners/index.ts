import type { App, BlockAction, ButtonAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import type { CommandHandler } from '../pipeline/ack-race.js';
import { actionListener, commandListener, eventListener } from '../pipeline/kinds.js';
import type { Tracked } from '../pipeline/tracked.js';
import {
  ACTION_OPEN_PAYMENT_PAGE,
  ACTION_REFRESH,
  ACTION_STOP_WATCH,
  ACTION_WATCH,
} from '../views/invoice.js';
import { acknowledgeOpenPaymentPage } from './actions/open-payment-page.js';
import { createRefreshInvoiceAction } from './actions/refresh-invoice.js';
import { createStopWatchAction } from './actions/stop-watch.js';
import { createWatchInvoiceAction } from './actions/watch-invoice.js';
import { createBalanceCommand } from './commands/balance.js';
import { createInvoiceCommand } from './commands/invoice.js';
import type { ListenerDeps } from './deps.js';
import { createLinkSharedEvent } from './events/link-shared.js';
import { acknowledgeUnknown, type KnownRequests } from './unknown.js';

type ButtonHandler = (args: SlackActionMiddlewareArgs<BlockAction<ButtonAction>>) => Promise<Tracked>;

/**
 * The one place that maps Slack's commands, actions and events to their handlers. What is
 * registered here is also what `acknowledgeUnknown` lets through to the listeners.
 */
export function registerListeners(app: App, deps: ListenerDeps): void {
  const known: KnownRequests = { commands: [], actions: [], events: [], shortcuts: [] };
  app.use(acknowledgeUnknown(known, deps.logger));

  const command = (name: string, handler: CommandHandler) => {
    known.commands.push(name);
    app.command(name, commandListener(deps, name, handler));
  };
  const button = (actionId: string | RegExp, name: string, handler: ButtonHandler) => {
    known.actions.push(actionId);
    app.action<BlockAction<ButtonAction>>(actionId, actionListener(deps, name, handler));
  };

  command('/balance', createBalanceCommand(deps));
  command('/invoice', createInvoiceCommand(deps));
  button(ACTION_REFRESH, ACTION_REFRESH, createRefreshInvoiceAction(deps));
  button(ACTION_OPEN_PAYMENT_PAGE, ACTION_OPEN_PAYMENT_PAGE, acknowledgeOpenPaymentPage);
  button(ACTION_WATCH, ACTION_WATCH, createWatchInvoiceAction(deps));
  // The card's Stop button, and the numbered ones of the /invoice watching list.
  button(new RegExp(`^${ACTION_STOP_WATCH}(:\\d+)?$`), ACTION_STOP_WATCH, createStopWatchAction(deps));
  known.events.push('link_shared');
  app.event('link_shared', eventListener(deps, 'link_shared', createLinkSharedEvent(deps)));
}
