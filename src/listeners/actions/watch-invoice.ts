import { settle } from '../../pipeline/error-policy.js';
import type { ListenerDeps } from '../deps.js';
import { startWatch } from '../watching.js';
import { answerClick, type Click, channelOf, containerOf, staleClick } from './click.js';

/** The thread a clicked card's live card should go to, if any. */
function threadOf(body: Click['body']): string | undefined {
  const container = containerOf(body);
  // An ephemeral card has no thread: its live card goes in the channel, as /invoice watch does.
  if (container.is_ephemeral) return undefined;
  const message = body.message as { ts?: string; thread_ts?: string } | undefined;
  return message?.thread_ts ?? container.message_ts ?? message?.ts;
}

/**
 * The Watch button on an invoice card or an unfurl: starts a watch whose live card is a reply in
 * the clicked card's thread, and tells only the clicker. A card's Watch carries the invoice id;
 * the shortcut's answer adds the thread it is about.
 */
export function createWatchInvoiceAction(deps: ListenerDeps) {
  return answerClick(deps, { value: 'placed', what: () => 'change_watch' }, async ({ body }, placed) => {
    const { id } = placed;
    const channelId = channelOf(body);
    // The bot puts this button only on messages in a conversation.
    if (channelId === undefined) return staleClick();
    const result = await settle(deps.logger, () =>
      startWatch(deps, {
        teamId: body.user.team_id ?? body.team?.id ?? '',
        channelId,
        userId: body.user.id,
        invoiceId: id,
        threadTs: placed.threadTs ?? threadOf(body),
      }),
    );
    return { result, invoiceId: id };
  });
}
