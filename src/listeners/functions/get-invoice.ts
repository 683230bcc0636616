import type { SlackEventMiddlewareArgs } from '@slack/bolt';
import { outcomeOf, reportFailure } from '../../pipeline/error-policy.js';
import type { Tracked } from '../../pipeline/tracked.js';
import { cut } from '../../text.js';
import { errorTitle } from '../../views/errors.js';
import { countedCall, type ListenerDeps } from '../deps.js';
import { parseInvoiceRef } from '../invoice-input.js';

export const FUNCTION_GET_INVOICE = 'get_invoice';

/** What Bolt gives a custom step's listener (`app.function`). */
export type StepArgs = SlackEventMiddlewareArgs<'function_executed'> & {
  inputs: Record<string, unknown>;
  complete: (args: { outputs: Record<string, unknown> }) => Promise<unknown>;
  fail: (args: { error: string }) => Promise<unknown>;
};

/**
 * The Workflow Builder step "Get invoice": reads one invoice and hands its facts to the next
 * steps (the amount as exact text); ends with fail() and a one-line reason a workflow author
 * understands when the input is no invoice, the invoice does not exist or the service is down.
 */
export function createGetInvoiceStep(deps: ListenerDeps) {
  return async ({ inputs, complete, fail }: StepArgs): Promise<Tracked> => {
    const text = typeof inputs.invoice === 'string' ? inputs.invoice.trim() : '';
    const id = parseInvoiceRef(text, deps.payUrl);
    const failWith = (error: string) => countedCall(deps, 'functions.completeError', () => fail({ error }));
    if (!id) {
      await failWith(`"${cut(text, 100)}" is not an invoice id or payment link`);
      return { outcome: 'invalid_input' };
    }
    try {
      // A workflow runs for whoever started it; the step is told of no person, only of the invoice.
      await deps.access.demand({
        who: { userId: undefined },
        where: { channelId: undefined },
        what: 'read_invoice',
      });
      const invoice = await deps.payments.getInvoice(id);
      // A workflow step is in no conversation: no sighting, never listed in a channel.
      await deps.watches.lookedUp(undefined, invoice);
      await countedCall(deps, 'functions.completeSuccess', () =>
        complete({
          outputs: {
            status: invoice.status,
            pay_status: invoice.payStatus,
            amount: invoice.amount.toString(),
            currency: invoice.currency,
            title: invoice.title,
            link: invoice.link,
            expires_at: Math.floor(invoice.timeout.getTime() / 1000),
            shop: invoice.shop.title,
          },
        }),
      );
      return { outcome: 'ok', invoiceId: id };
    } catch (error) {
      reportFailure(deps.logger, error);
      await failWith(`${errorTitle(error)} (invoice ${id})`);
      return { outcome: outcomeOf(error), invoiceId: id };
    }
  };
}
