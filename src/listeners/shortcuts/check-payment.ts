import type { MessageShortcut, SlackShortcutMiddlewareArgs } from '@slack/bolt';
import { AccessDeniedError } from '../../access.js';
import { acknowledge, deliver } from '../../pipeline/delivery.js';
import { reportFailure } from '../../pipeline/error-policy.js';
import type { Tracked } from '../../pipeline/tracked.js';
import { errorMessage } from '../../views/errors.js';
import { type Lookup, nothingFoundMessage, paymentCheckMessage } from '../../views/shortcut.js';
import type { ListenerDeps } from '../deps.js';
import { findInvoiceRefs } from '../invoice-input.js';

/**
 * "Check payment status" on any message (in a channel, a thread, a DM): every invoice id and
 * payment link in it, up to ten, looked up at once and answered privately with a compact card
 * each. Nothing is called for anything that is not an id.
 */
export function createCheckPaymentShortcut(deps: ListenerDeps) {
  return async ({ ack, shortcut }: SlackShortcutMiddlewareArgs<MessageShortcut>): Promise<Tracked> => {
    await acknowledge(ack, deps.logger);
    const respond = (message: { text: string; blocks: unknown[] }) =>
      deliver(
        deps.responseUrls,
        shortcut.response_url,
        { response_type: 'ephemeral', ...message } as never,
        deps.logger,
      );
    try {
      await deps.access.demand({
        who: { userId: shortcut.user.id, teamId: shortcut.user.team_id },
        where: { channelId: shortcut.channel.id },
        what: 'read_invoice',
      });
    } catch (error) {
      // A guest of the workspace is told why, privately, as on every other surface.
      if (!(error instanceof AccessDeniedError)) throw error;
      return { outcome: error.code, delivery: await respond(errorMessage(error)) };
    }
    const { ids, more } = findInvoiceRefs(shortcut.message, deps.payUrl);
    if (ids.length === 0) return { outcome: 'no_invoice', delivery: await respond(nothingFoundMessage()) };

    const lookups: Lookup[] = await Promise.all(
      ids.map(async (id): Promise<Lookup> => {
        try {
          const invoice = await deps.payments.getInvoice(id);
          // Answered privately: no conversation saw it (Share in thread is what names it in the channel's feed).
          await deps.watches.lookedUp(undefined, invoice);
          return { id, invoice, watchable: deps.watches.watchable(invoice) };
        } catch (error) {
          reportFailure(deps.logger, error);
          return { id, error };
        }
      }),
    );
    const message = shortcut.message as { ts: string; thread_ts?: string };
    const threadTs = message.thread_ts ?? message.ts;
    const delivery = await respond(paymentCheckMessage(lookups, more, { now: deps.clock(), threadTs }));
    return { outcome: 'ok', invoiceId: ids.join(','), delivery, counts: { invoices: ids.length } };
  };
}
