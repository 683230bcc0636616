import { ACTION_OPEN_PAYMENT_PAGE, ACTION_STOP_WATCH, SHORTCUT_CHECK_PAYMENT } from '../../domain/actions.js';
import { COMMANDS, type Command } from '../../domain/commands.js';
import type { AckRaceDeps } from '../../pipeline/ack-race.js';
import { acknowledge, deliver } from '../../pipeline/delivery.js';
import {
  actionListener,
  commandListener,
  eventListener,
  functionListener,
  shortcutListener,
} from '../../pipeline/kinds.js';
import { reply, toResponse } from '../../pipeline/reply.js';
import type { Tracked } from '../../pipeline/tracked.js';
import { notConnectedMessage, stepNotConnected, watchesEndedMessage } from '../../views/installation.js';
import { FUNCTION_GET_INVOICE } from '../functions/get-invoice.js';
import { BUTTONS, type ClickArgs, type EventArgs, type Handlers } from '../index.js';

/**
 * The handlers of an installation whose payment account is not connected (never, or no longer): every surface
 * answers privately that it is not and who can connect it, and calls no payment service. A
 * pasted payment link is left as Slack shows it (an unfurl is seen by the whole channel); the
 * App Home shows the payment account, with the button that connects it to those who may.
 */
export function notConnectedHandlers(
  deps: AckRaceDeps,
  installerUserId: string,
  publishHome: (args: EventArgs<'app_home_opened'>) => Promise<void>,
): Handlers {
  const message = notConnectedMessage(installerUserId);
  const answer = reply(message, 'ephemeral', 'not_connected');
  /** What a stop is told: the watches ended with the Disconnect, not that nothing was ever connected. */
  const ended = reply(watchesEndedMessage(installerUserId), 'ephemeral', 'not_connected');
  const command = (name: string) =>
    commandListener(deps, name, async ({ text }) =>
      name === '/invoice' && /^\s*unwatch\b/i.test(text) ? ended : answer,
    );
  /** Told privately through the response_url, the clicked or shortcut's message left as it was. */
  const tell = async (
    ack: () => Promise<void>,
    responseUrl: string | undefined,
    told = answer,
  ): Promise<Tracked> => {
    await acknowledge(ack, deps.logger);
    const delivery = responseUrl
      ? await deliver(
          deps.responseUrls,
          responseUrl,
          { ...toResponse(told), replace_original: false },
          deps.logger,
        )
      : undefined;
    return { outcome: 'not_connected', delivery };
  };
  const button = (actionId: string) =>
    actionListener<ClickArgs>(deps, actionId, ({ ack, body }) =>
      // The payment page button is a link: Slack opens it; the click only needs its ack.
      actionId === ACTION_OPEN_PAYMENT_PAGE
        ? acknowledge(ack, deps.logger).then(() => ({ outcome: 'ok' }))
        : tell(ack, body.response_url, actionId === ACTION_STOP_WATCH ? ended : answer),
    );
  return {
    command: Object.fromEntries(COMMANDS.map((name) => [name, command(name)])) as Record<
      Command,
      ReturnType<typeof command>
    >,
    button: Object.fromEntries(BUTTONS.map((id) => [id, button(id)])) as Handlers['button'],
    shortcut: shortcutListener(deps, SHORTCUT_CHECK_PAYMENT, ({ ack, shortcut }) =>
      tell(ack, shortcut.response_url),
    ),
    event: {
      link_shared: eventListener(deps, 'link_shared', async () => ({
        outcome: 'not_connected',
        quiet: true,
      })),
      app_home_opened: eventListener(deps, 'app_home_opened', async (args: EventArgs<'app_home_opened'>) => {
        if (args.event.tab !== 'home') return { outcome: 'ok', quiet: true };
        await publishHome(args);
        return { outcome: 'not_connected', delivery: 'view' };
      }),
    },
    step: functionListener(deps, FUNCTION_GET_INVOICE, async ({ fail }) => {
      await fail({ error: stepNotConnected() });
      return { outcome: 'not_connected' };
    }),
  };
}
