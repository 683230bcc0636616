import { type Reply, reply } from '../pipeline/reply.js';
import { watchReplies } from '../views/watch.js';
import type { StartRequest } from '../watches/service.js';
import type { ListenerDeps } from './deps.js';

/**
 * Starts a watch for `/invoice watch` and the Watch buttons alike, and says privately how it
 * went. Who may start one, each caller has asked the access rules (`change_watch`) first.
 */
export async function startWatch(deps: ListenerDeps, req: StartRequest): Promise<Reply> {
  const result = await deps.watches.start(req);
  switch (result.kind) {
    case 'started':
      return reply(watchReplies.started(result.invoice, result.inThread), 'ephemeral', 'ok', req.invoiceId);
    case 'already':
      return reply(
        watchReplies.already(result.invoice, result.since),
        'ephemeral',
        'already_watched',
        req.invoiceId,
      );
    case 'posting':
      return reply(
        watchReplies.posting(result.invoice, result.since),
        'ephemeral',
        'already_watched',
        req.invoiceId,
      );
    case 'unconfirmed':
      return reply(watchReplies.unconfirmed(result.invoice), 'ephemeral', 'slack_busy', req.invoiceId);
    case 'limit':
      return reply(watchReplies.limit(result.limit), 'ephemeral', 'watch_limit', req.invoiceId);
    case 'expired':
      return reply(watchReplies.expired(result.invoice), 'ephemeral', 'invoice_expired', req.invoiceId);
    case 'final':
      return reply(watchReplies.final(result.invoice), 'ephemeral', 'invoice_final', req.invoiceId);
    case 'ended':
      return reply(
        watchReplies.endedAtStart(result.invoice, result.why),
        'ephemeral',
        'not_watched',
        req.invoiceId,
      );
    case 'not_in_channel':
      return reply(watchReplies.inviteFirst(req.channelId), 'ephemeral', 'not_in_channel', req.invoiceId);
  }
}
