import { settle } from '../../pipeline/error-policy.js';
import { reply, toResponse } from '../../pipeline/reply.js';
import { watchListMessage, watchReplies } from '../../views/watch.js';
import type { ListenerDeps } from '../deps.js';
import { answerClick, channelOf, containerOf } from './click.js';

/**
 * Stop watching, on a live card or in the `/invoice watching` list: ends the watch (its card and
 * thread are told through the outbox). A click in the private list refreshes the list in place;
 * a click on the card tells only the clicker.
 */
export function createStopWatchAction(deps: ListenerDeps) {
  return answerClick(deps, { value: 'watch', what: () => 'change_watch' }, async ({ body }, watchId) => {
    const inList = Boolean(containerOf(body).is_ephemeral);
    const result = await settle(deps.logger, async () => {
      const stopped = await deps.watches.stop(watchId, body.user.id);
      const channelId = channelOf(body);
      if (inList && channelId) {
        return reply(
          watchListMessage(channelId, await deps.watches.list(channelId)),
          'ephemeral',
          stopped.kind === 'stopped' ? 'ok' : 'not_watched',
        );
      }
      return stopped.kind === 'stopped'
        ? reply(watchReplies.stopped(stopped.title), 'ephemeral')
        : reply(watchReplies.notWatched(), 'ephemeral', 'not_watched');
    });
    return { result, response: { ...toResponse(result), replace_original: inList } };
  });
}
