import type { SlashCommand } from '@slack/bolt';
import type { Action } from '../../access.js';
import type { InvoiceId } from '../../payments/index.js';
import type { CommandHandler } from '../../pipeline/ack-race.js';
import { settle } from '../../pipeline/error-policy.js';
import { type Reply, reply } from '../../pipeline/reply.js';
import { invalidInvoiceMessage, linkElsewhereMessage, unknownWordMessage } from '../../views/errors.js';
import { invoiceHelp, invoiceUsage } from '../../views/help.js';
import { invoiceMessage } from '../../views/invoice.js';
import { invoiceCardEntity } from '../../views/invoice-entity.js';
import { watchListMessage, watchReplies } from '../../views/watch.js';
import { commandQuestion, type ListenerDeps } from '../deps.js';
import { type InvoiceVerb, parseInvoiceText } from '../invoice-input.js';
import { startWatch } from '../watching.js';

/**
 * `/invoice <id or payment link>`: shown in the channel (or to the asker, per INVOICE_REPLY);
 * `/invoice watch|unwatch <id or link>` and `/invoice watching`: the channel's watches, answered
 * privately (the live card itself is the bot's own message in the channel).
 */
/** What each verb asks of the access rules. */
const ASKS: Readonly<Record<InvoiceVerb, Action>> = {
  show: 'read_invoice',
  watch: 'change_watch',
  unwatch: 'change_watch',
};

export function createInvoiceCommand(deps: ListenerDeps): CommandHandler {
  const act = async (verb: InvoiceVerb, id: InvoiceId, command: SlashCommand): Promise<Reply> => {
    await deps.access.demand(commandQuestion(command, ASKS[verb]));
    switch (verb) {
      case 'show': {
        const invoice = await deps.payments.getInvoice(id);
        const watchable = deps.watches.watchable(invoice);
        const card = reply(
          invoiceMessage(invoice, { now: deps.clock(), watchable }),
          deps.invoiceReply,
          'ok',
          id,
        );
        // A card the channel sees is a Work Object too; one only the asker sees stays a message.
        if (deps.invoiceReply !== 'in_channel') return card;
        return {
          ...card,
          entities: [invoiceCardEntity(invoice, { installation: deps.installation })],
          // Named in the channel's feed (only when the channel sees the card too), once the card is out.
          afterwards: () => deps.watches.lookedUp(command.channel_id, invoice),
        };
      }
      case 'watch':
        return startWatch(deps, {
          teamId: command.team_id,
          channelId: command.channel_id,
          userId: command.user_id,
          invoiceId: id,
        });
      case 'unwatch': {
        const stopped = await deps.watches.stopInvoice(command.channel_id, id, command.user_id);
        return stopped.kind === 'stopped'
          ? reply(watchReplies.stopped(stopped.title), 'ephemeral', 'ok', id)
          : reply(watchReplies.notWatched(), 'ephemeral', 'not_watched', id);
      }
    }
  };

  return async (command) => {
    const input = parseInvoiceText(command.text, deps.payUrl);
    switch (input.kind) {
      case 'usage':
        return reply(invoiceUsage(input.verb), 'ephemeral', 'usage');
      case 'help':
        return reply(invoiceHelp(deps.invoiceReply, deps.maxWatchDays), 'ephemeral', 'help');
      case 'watching':
        await deps.access.demand(commandQuestion(command, 'read_invoice'));
        return reply(
          watchListMessage(command.channel_id, await deps.watches.list(command.channel_id)),
          'ephemeral',
        );
      case 'invalid':
        return reply(invalidInvoiceMessage(input.text), 'ephemeral', 'invalid_input');
      case 'elsewhere':
        return reply(
          linkElsewhereMessage(input.text, input.host, input.payUrl),
          'ephemeral',
          'invalid_input',
        );
      case 'unknown_word':
        return reply(unknownWordMessage({ command: '/invoice', ...input }), 'ephemeral', 'usage');
      case 'invoice': {
        const { id } = input;
        return settle(deps.logger, () => act(input.verb, id, command), { invoiceId: id });
      }
    }
  };
}
