import type { CommandHandler } from '../../pipeline/ack-race.js';
import { settle } from '../../pipeline/error-policy.js';
import { reply } from '../../pipeline/reply.js';
import { invalidInvoiceMessage } from '../../views/errors.js';
import { invoiceHelp, invoiceUsage } from '../../views/help.js';
import { invoiceMessage } from '../../views/invoice.js';
import type { ListenerDeps } from '../deps.js';
import { parseInvoiceText } from '../invoice-input.js';

/** `/invoice <id or payment link>`: shown in the channel (or to the asker, per INVOICE_REPLY). */
export function createInvoiceCommand(deps: ListenerDeps): CommandHandler {
  return async (command) => {
    const input = parseInvoiceText(command.text, deps.payUrl);
    switch (input.kind) {
      case 'usage':
        return reply(invoiceUsage(), 'ephemeral', 'usage');
      case 'help':
        return reply(invoiceHelp(deps.invoiceReply), 'ephemeral', 'help');
      case 'invalid':
        return reply(invalidInvoiceMessage(input.text), 'ephemeral', 'invalid_input');
      case 'invoice': {
        const { id } = input;
        return settle(
          deps.logger,
          async () => {
            const invoice = await deps.payments.getInvoice(id);
            return reply(invoiceMessage(invoice, { now: deps.clock() }), deps.invoiceReply, 'ok', id);
          },
          { invoiceId: id },
        );
      }
    }
  };
}
