import { InvalidInvoiceIdError } from '../../payments/index.js';
import { invoiceHelp, invoiceUsage } from '../../views/help.js';
import { invoiceMessage } from '../../views/invoice.js';
import type { ListenerDeps } from '../deps.js';
import { parseInvoiceText } from '../invoice-input.js';
import { type CommandHandler, reply } from '../reply.js';

/** `/invoice <id or payment link>`: shown in the channel (or to the asker, per INVOICE_REPLY). */
export function createInvoiceCommand(deps: ListenerDeps): CommandHandler {
  return async (command, log) => {
    const input = parseInvoiceText(command.text, deps.payUrl);
    switch (input.kind) {
      case 'usage':
        return reply(invoiceUsage(), 'ephemeral', 'usage');
      case 'help':
        return reply(invoiceHelp(deps.invoiceReply), 'ephemeral', 'help');
      case 'invalid':
        throw new InvalidInvoiceIdError(input.text);
      case 'invoice': {
        log.invoiceId = input.id;
        const invoice = await deps.payments.getInvoice(input.id);
        return reply(invoiceMessage(invoice, { now: deps.clock() }), deps.invoiceReply);
      }
    }
  };
}
