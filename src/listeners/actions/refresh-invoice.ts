import type { BlockAction, ButtonAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import { ACTION_REFRESH, invoiceMessage } from '../../views/invoice.js';
import type { ListenerDeps } from '../deps.js';
import { deliver, logRequest, type RequestLog, reply, settle, toResponse } from '../reply.js';

const REFRESH_FAILED = 'Could not refresh the invoice';

/**
 * The Refresh button: reads the invoice again and replaces the message in place through the
 * click's own response_url. On failure the message stays as it was and only the clicker is told.
 */
export function createRefreshInvoiceAction(deps: ListenerDeps) {
  return ({
    ack,
    body,
    action,
    respond,
  }: SlackActionMiddlewareArgs<BlockAction<ButtonAction>>): Promise<void> =>
    deps.inflight.run(async () => {
      await ack();
      const startedAt = performance.now();
      const log: RequestLog = {
        kind: 'action',
        name: ACTION_REFRESH,
        user: body.user.id,
        team: body.team?.id,
        channel: body.channel?.id,
        invoiceId: action.value,
      };
      const result = await settle(
        deps.logger,
        async () => {
          const invoice = await deps.payments.getInvoice(action.value ?? '');
          return reply(
            invoiceMessage(invoice, { now: deps.clock(), refreshedBy: body.user.id }),
            'in_channel',
          );
        },
        REFRESH_FAILED,
      );
      const response = result.failed
        ? { ...toResponse(result), replace_original: false }
        : { text: result.message.text, blocks: result.message.blocks, replace_original: true };
      const delivered = await deliver(respond, response, deps.logger);
      logRequest(deps.logger, log, result.outcome, startedAt, {
        delivery: delivered ? 'response_url' : 'failed',
      });
    });
}
