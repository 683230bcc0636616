import { settle } from '../../pipeline/error-policy.js';
import { reply } from '../../pipeline/reply.js';
import { SlackPostError } from '../../slack/calls.js';
import { invoiceMessage } from '../../views/invoice.js';
import { sharedReply } from '../../views/shortcut.js';
import { watchReplies } from '../../views/watch.js';
import type { ListenerDeps } from '../deps.js';
import { answerClick, channelOf, staleClick } from './click.js';

/**
 * Share in thread, on the shortcut's private answer: the full invoice card goes in the thread of
 * the message the shortcut was used on, saying who shared it; only the clicker is told.
 */
export function createShareInvoiceAction(deps: ListenerDeps) {
  return answerClick(deps, { value: 'placed', what: () => 'change_card' }, async ({ body }, placed) => {
    const { id } = placed;
    const channelId = channelOf(body);
    // The bot puts this button only on messages in a conversation.
    if (channelId === undefined) return staleClick();
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
