import type { AllMiddlewareArgs, App } from '@slack/bolt';
import type { Logger } from '../../logger.js';
import { notConnectedMessage, stepUnavailable } from '../../views/installation.js';
import {
  ACTION_OPEN_PAYMENT_PAGE,
  ACTION_REFRESH,
  ACTION_STOP_WATCH,
  ACTION_WATCH,
} from '../../views/invoice.js';
import { ACTION_SHARE, SHORTCUT_CHECK_PAYMENT } from '../../views/shortcut.js';
import { FUNCTION_GET_INVOICE } from '../functions/get-invoice.js';
import { numbered } from '../index.js';
import { installationOf, openPaymentAccountModal, publishHome } from './payment-account.js';

const answerOf = (context: AllMiddlewareArgs['context']) => {
  const { installerUserId, account } = installationOf(context);
  return notConnectedMessage(installerUserId, account);
};

/**
 * Many workspaces, in this release: every surface answers privately that the payment account is
 * not connected yet and who can connect it (or, once it is, that reading it from Slack is still
 * to come), and calls no payment service. `/balance connect` opens the modal that connects it. A
 * pasted payment link is left as Slack shows it: an unfurl is seen by the whole channel.
 */
export function registerNotConnected(app: App, logger: Logger): void {
  app.command('/balance', async ({ ack, command, client, context, respond }) => {
    if (command.text.trim().toLowerCase() !== 'connect') {
      await ack({ response_type: 'ephemeral', ...answerOf(context) });
      return;
    }
    await ack();
    await openPaymentAccountModal(
      client,
      installationOf(context),
      command.user_id,
      command.trigger_id,
      (message) => respond({ response_type: 'ephemeral', ...message }),
    );
  });
  app.command('/invoice', async ({ ack, context }) => {
    await ack({ response_type: 'ephemeral', ...answerOf(context) });
  });
  // The payment page button is a link: Slack opens it; the click only needs its ack.
  app.action(numbered(ACTION_OPEN_PAYMENT_PAGE), async ({ ack }) => ack());
  const buttons = [ACTION_REFRESH, ACTION_WATCH, ACTION_STOP_WATCH, ACTION_SHARE];
  for (const actionId of buttons) {
    app.action(numbered(actionId), async ({ ack, respond, context }) => {
      await ack();
      await respond({
        response_type: 'ephemeral',
        replace_original: false,
        ...answerOf(context),
      });
    });
  }
  app.shortcut(
    { callback_id: SHORTCUT_CHECK_PAYMENT, type: 'message_action' },
    async ({ ack, respond, context }) => {
      await ack();
      await respond({ response_type: 'ephemeral', ...answerOf(context) });
    },
  );
  app.event('app_home_opened', async ({ event, client, context }) => {
    if (event.tab !== 'home') return;
    await publishHome(client, installationOf(context), event.user);
  });
  app.event('link_shared', async ({ context }) => {
    logger.debug({ team: context.teamId }, 'link not unfurled: the payment account is not connected');
  });
  app.function(FUNCTION_GET_INVOICE, async ({ fail, context }) => {
    await fail({ error: stepUnavailable(installationOf(context).account !== undefined) });
  });
}
