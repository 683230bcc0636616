import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import { actionListener, commandListener, eventListener } from '../pipeline/kinds.js';
import { ACTION_OPEN_PAYMENT_PAGE, ACTION_REFRESH } from '../views/invoice.js';
import { acknowledgeOpenPaymentPage } from './actions/open-payment-page.js';
import { createRefreshInvoiceAction } from './actions/refresh-invoice.js';
import { createBalanceCommand } from './commands/balance.js';
import { createInvoiceCommand } from './commands/invoice.js';
import type { ListenerDeps } from './deps.js';
import { createLinkSharedEvent } from './events/link-shared.js';

/** The one place that maps Slack's commands, actions and events to their handlers. */
export function registerListeners(app: App, deps: ListenerDeps): void {
  app.command('/balance', commandListener(deps, '/balance', createBalanceCommand(deps)));
  app.command('/invoice', commandListener(deps, '/invoice', createInvoiceCommand(deps)));
  app.action<BlockAction<ButtonAction>>(
    ACTION_REFRESH,
    actionListener(deps, ACTION_REFRESH, createRefreshInvoiceAction(deps)),
  );
  app.action(
    ACTION_OPEN_PAYMENT_PAGE,
    actionListener(deps, ACTION_OPEN_PAYMENT_PAGE, acknowledgeOpenPaymentPage),
  );
  app.event('link_shared', eventListener(deps, 'link_shared', createLinkSharedEvent(deps)));
}
