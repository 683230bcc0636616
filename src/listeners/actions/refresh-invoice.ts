import { settle } from '../../pipeline/error-policy.js';
import { reply } from '../../pipeline/reply.js';
import { invoiceMessage } from '../../views/invoice.js';
import type { ListenerDeps } from '../deps.js';
import { answerClick, type ButtonSpec, channelOf, containerOf } from './click.js';

const REFRESH_FAILED = 'Could not refresh the invoice';

/**
 * The Refresh button: reads the invoice again and replaces the message in place through the
 * click's own response_url. On failure the message stays as it was and only the clicker is told.
 */
export function createRefreshInvoiceAction(deps: ListenerDeps) {
  const spec: ButtonSpec<'invoice'> = {
    value: 'invoice',
    // A card everyone in the channel sees changes for them all; a private one only for the clicker.
    what: (body) => (containerOf(body).is_ephemeral ? 'read_invoice' : 'change_card'),
  };
  return answerClick(deps, spec, async ({ body }, id) => {
    const result = await settle(
      deps.logger,
      async () => {
        const invoice = await deps.payments.getInvoice(id);
        // A private card's refresh is the clicker's alone: named in no channel's feed.
        await deps.watches.lookedUp(containerOf(body).is_ephemeral ? undefined : channelOf(body), invoice);
        const message = invoiceMessage(invoice, {
          now: deps.clock(),
          refreshedBy: body.user.id,
          watchable: deps.watches.watchable(invoice),
        });
        return reply(message, 'in_channel', 'ok', id);
      },
      { intro: REFRESH_FAILED, invoiceId: id },
    );
    // The card itself is replaced, keeping its place and who sees it; a failure goes only to the clicker.
    const response =
      result.outcome === 'ok'
        ? { text: result.message.text, blocks: result.message.blocks, replace_original: true }
        : undefined;
    return { result, response, invoiceId: id };
  });
}
