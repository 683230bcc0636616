import type { BlockAction, ButtonAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import { parseInvoiceId } from '../../payments/index.js';
import { acknowledge, deliver } from '../../pipeline/delivery.js';
import { settle } from '../../pipeline/error-policy.js';
import { reply, toResponse } from '../../pipeline/reply.js';
import type { Tracked } from '../../pipeline/tracked.js';
import { invalidInvoiceMessage } from '../../views/errors.js';
import { invoiceMessage } from '../../views/invoice.js';
import type { ListenerDeps } from '../deps.js';

export const REFRESH_FAILED = 'Could not refresh the invoice';

/**
 * The Refresh button: reads the invoice again and replaces the message in place through the
 * click's own response_url. On failure the message stays as it was and only the clicker is told.
 */
export function createRefreshInvoiceAction(deps: ListenerDeps) {
  return async ({
    ack,
    body,
    action,
  }: SlackActionMiddlewareArgs<BlockAction<ButtonAction>>): Promise<Tracked> => {
    await acknowledge(ack, deps.logger);
    const value = action.value ?? '';
    const id = parseInvoiceId(value);
    const result =
      id === undefined
        ? reply(invalidInvoiceMessage(value), 'ephemeral', 'invalid_input')
        : await settle(
            deps.logger,
            async () => {
              const invoice = await deps.payments.getInvoice(id);
              const message = invoiceMessage(invoice, { now: deps.clock(), refreshedBy: body.user.id });
              return reply(message, 'in_channel', 'ok', id);
            },
            { intro: REFRESH_FAILED, invoiceId: id },
          );
    const response =
      result.outcome === 'ok'
        ? { text: result.message.text, blocks: result.message.blocks, replace_original: true }
        : { ...toResponse(result), replace_original: false };
    const delivery = await deliver(deps.responseUrls, body.response_url, response, deps.logger);
    return { outcome: result.outcome, invoiceId: id, delivery };
  };
}
