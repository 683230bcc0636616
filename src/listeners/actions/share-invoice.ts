import { parseInvoiceId } from '../../payments/index.js';
import { settle } from '../../pipeline/error-policy.js';
import { reply } from '../../pipeline/reply.js';
import { SlackPostError } from '../../slack/poster.js';
import { invalidInvoiceMessage } from '../../views/errors.js';
import { invoiceMessage } from '../../views/invoice.js';
import { readPlacedValue, sharedReply } from '../../views/shortcut.js';
import { watchReplies } from '../../views/watch.js';
import type { ListenerDeps } from '../deps.js';
import { answerClick } from './click.js';

/**
 * Share in thread, on the shortcut's private answer: the full invoice card goes in the thread of
 * the message the shortcut was used on, saying who shared it; only the clicker is told.
 */
export function createShareInvoiceAction(deps: ListenerDeps) {
  return answerClick(deps, async ({ body, action }) => {
    const placed = readPlacedValue(action.value ?? '');
    const id = parseInvoiceId(placed.id);
    const channelId = body.channel?.id;
    if (id === undefined || channelId === undefined)
      return { result: reply(invalidInvoiceMessage(placed.id), 'ephemeral', 'invalid_input') };
    const result = await settle(
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
    return { result, invoiceId: id };
  });
}
