import type { BlockAction, ButtonAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import { parseInvoiceId } from '../../payments/index.js';
import { acknowledge, deliver } from '../../pipeline/delivery.js';
import { settle } from '../../pipeline/error-policy.js';
import { reply, toResponse } from '../../pipeline/reply.js';
import type { Tracked } from '../../pipeline/tracked.js';
import { invalidInvoiceMessage } from '../../views/errors.js';
import { readPlacedValue } from '../../views/shortcut.js';
import type { ListenerDeps } from '../deps.js';
import { startWatch } from '../watching.js';

/** Where a clicked card sits: its channel, and the thread its live card should go to, if any. */
function placeOf(body: BlockAction<ButtonAction>): {
  channelId: string | undefined;
  threadTs: string | undefined;
} {
  const container = body.container as { channel_id?: string; message_ts?: string; is_ephemeral?: boolean };
  const channelId = body.channel?.id ?? container.channel_id;
  // An ephemeral card has no thread: its live card goes in the channel, as /invoice watch does.
  if (container.is_ephemeral) return { channelId, threadTs: undefined };
  const message = body.message as { ts?: string; thread_ts?: string } | undefined;
  return { channelId, threadTs: message?.thread_ts ?? container.message_ts ?? message?.ts };
}

/**
 * The Watch button on an invoice card or an unfurl: starts a watch whose live card is a reply in
 * the clicked card's thread, and tells only the clicker.
 */
export function createWatchInvoiceAction(deps: ListenerDeps) {
  return async ({
    ack,
    body,
    action,
  }: SlackActionMiddlewareArgs<BlockAction<ButtonAction>>): Promise<Tracked> => {
    await acknowledge(ack, deps.logger);
    // A card's Watch carries the invoice id; the shortcut's answer adds the thread it is about.
    const placed = readPlacedValue(action.value ?? '');
    const value = placed.id;
    const id = parseInvoiceId(value);
    const place = placeOf(body);
    const channelId = place.channelId;
    const threadTs = placed.threadTs ?? place.threadTs;
    const result =
      id === undefined || channelId === undefined
        ? reply(invalidInvoiceMessage(value), 'ephemeral', 'invalid_input')
        : await settle(
            deps.logger,
            () =>
              startWatch(deps, {
                teamId: body.user.team_id ?? body.team?.id ?? '',
                channelId,
                userId: body.user.id,
                invoiceId: id,
                threadTs,
              }),
            { invoiceId: id },
          );
    const response = { ...toResponse(result), replace_original: false };
    const delivery = await deliver(deps.responseUrls, body.response_url, response, deps.logger);
    return { outcome: result.outcome, invoiceId: id, delivery };
  };
}
