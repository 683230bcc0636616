import type { BlockAction, ButtonAction } from '@slack/bolt';
import { parseInvoiceId } from '../../payments/index.js';
import { settle } from '../../pipeline/error-policy.js';
import { reply } from '../../pipeline/reply.js';
import { invalidInvoiceMessage } from '../../views/errors.js';
import { readPlacedValue } from '../../views/shortcut.js';
import type { ListenerDeps } from '../deps.js';
import { startWatch } from '../watching.js';
import { answerClick } from './click.js';

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
  return answerClick(deps, async ({ body, action }) => {
    // A card's Watch carries the invoice id; the shortcut's answer adds the thread it is about.
    const placed = readPlacedValue(action.value ?? '');
    const id = parseInvoiceId(placed.id);
    const { channelId, threadTs } = placeOf(body);
    if (id === undefined || channelId === undefined)
      return { result: reply(invalidInvoiceMessage(placed.id), 'ephemeral', 'invalid_input') };
    const result = await settle(
      deps.logger,
      () =>
        startWatch(deps, {
          teamId: body.user.team_id ?? body.team?.id ?? '',
          channelId,
          userId: body.user.id,
          invoiceId: id,
          threadTs: placed.threadTs ?? threadTs,
        }),
      { invoiceId: id },
    );
    return { result, invoiceId: id };
  });
}
