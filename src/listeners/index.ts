import type { App, BlockAction, ButtonAction } from '@slack/bolt';
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
import type { ButtonHandler } from './actions/click.js';
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
import { createGetInvoiceStep, FUNCTION_GET_INVOICE } from './functions/get-invoice.js';
import { createCheckPaymentShortcut } from './shortcuts/check-payment.js';
import { acknowledgeUnknown, type KnownRequests } from './unknown.js';

/** An action id alone, or with the `:<n>` suffix that tells a message's numbered buttons apart. */
export const numbered = (actionId: string) => new RegExp(`^${actionId}(:\\d+)?$`);

/**
 * The one place that maps Slack's commands, actions, shortcuts, events and workflow steps to
 * their handlers. What is registered here is also what `acknowledgeUnknown` lets through.
 */
export function registerListeners(app: App, deps: ListenerDeps): void {
  const known: KnownRequests = { commands: [], actions: [], events: [], shortcuts: [] };
  app.use(acknowledgeUnknown(known, deps.logger));

  const command = (name: string, handler: CommandHandler) => {
    known.commands.push(name);
    app.command(name, commandListener(deps, name, handler));
  };
  const button = (actionId: string, handler: ButtonHandler) => {
    const pattern = numbered(actionId);
    known.actions.push(pattern);
    app.action<BlockAction<ButtonAction>>(pattern, actionListener(deps, actionId, handler));
  };

  command('/balance', createBalanceCommand(deps));
  command('/invoice', createInvoiceCommand(deps));
  button(ACTION_REFRESH, createRefreshInvoiceAction(deps));
  button(ACTION_OPEN_PAYMENT_PAGE, acknowledgeOpenPaymentPage);
  button(ACTION_WATCH, createWatchInvoiceAction(deps));
  button(ACTION_STOP_WATCH, createStopWatchAction(deps));
  button(ACTION_SHARE, createShareInvoiceAction(deps));

  known.shortcuts.push(SHORTCUT_CHECK_PAYMENT);
  app.shortcut(
    { callback_id: SHORTCUT_CHECK_PAYMENT, type: 'message_action' },
    shortcutListener(deps, SHORTCUT_CHECK_PAYMENT, createCheckPaymentShortcut(deps)),
  );

  known.events.push('link_shared', 'app_home_opened', 'function_executed');
  app.event('link_shared', eventListener(deps, 'link_shared', createLinkSharedEvent(deps)));
  app.event('app_home_opened', eventListener(deps, 'app_home_opened', createAppHomeOpened(deps)));
  app.function(
    FUNCTION_GET_INVOICE,
    functionListener(deps, FUNCTION_GET_INVOICE, createGetInvoiceStep(deps)),
  );
}
