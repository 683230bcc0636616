import type { BlockAction, ButtonAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import { parseInvoiceId } from '../../payments/index.js';
import { acknowledge, deliver } from '../../pipeline/delivery.js';
import { settle } from '../../pipeline/error-policy.js';
import { reply, toResponse } from '../../pipeline/reply.js';
import type { Tracked } from '../../pipeline/tracked.js';
import { SlackPostError } from '../../slack/poster.js';
import { invalidInvoiceMessage } from '../../views/errors.js';
import { invoiceMessage } from '../../views/invoice.js';
import { readPlacedValue, sharedReply } from '../../views/shortcut.js';
import { watchReplies } from '../../views/watch.js';
import type { ListenerDeps } from '../deps.js';

/**
 * Share in thread, on the shortcut's private answer: the full invoice card goes in the thread of
 * the message the shortcut was used on, saying who shared it; only the clicker is told.
 */
export function createShareInvoiceAction(deps: ListenerDeps) {
  return async ({
    ack,
    body,
    action,
  }: SlackActionMiddlewareArgs<BlockAction<ButtonAction>>): Promise<Tracked> => {
    await acknowledge(ack, deps.logger);
    const placed = readPlacedValue(action.value ?? '');
    const id = parseInvoiceId(placed.id);
    const channelId = body.channel?.id;
    const result =
      id === undefined || channelId === undefined
        ? reply(invalidInvoiceMessage(placed.id), 'ephemeral', 'invalid_input')
        : await settle(
            deps.logger,
            async () => {
              const invoice = await deps.payments.getInvoice(id);
              const card = invoiceMessage(invoice, { now: deps.clock(), sharedBy: body.user.id });
              try {
                await deps.poster.post({ channel: channelId, threadTs: placed.threadTs, ...card });
              } catch (error) {
                if (error instanceof SlackPostError && error.failure === 'not_in_channel') {
                  return reply(watchReplies.inviteFirst(channelId), 'ephemeral', 'not_in_channel', id);
                }
                throw error;
              }
              return reply(sharedReply(), 'ephemeral', 'ok', id);
            },
            { invoiceId: id },
          );
    const delivery = await deliver(
      deps.responseUrls,
      body.response_url,
      { ...toResponse(result), replace_original: false },
      deps.logger,
    );
    return { outcome: result.outcome, invoiceId: id, delivery };
  };
}
