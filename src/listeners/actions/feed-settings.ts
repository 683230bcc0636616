import type { BlockAction, ButtonAction, SlackActionMiddlewareArgs, webApi } from '@slack/bolt';
import { AccessDeniedError, type Question } from '../../access.js';
import { acknowledge } from '../../pipeline/delivery.js';
import type { Tracked } from '../../pipeline/tracked.js';
import { CHANNEL_ID } from '../../slack-ids.js';
import type { Message } from '../../views/blocks.js';
import { errorMessage, staleButtonMessage } from '../../views/errors.js';
import { feedReplies } from '../../views/feed.js';
import { settingsModal, settingsNoticeModal } from '../../views/feed-settings.js';
import { countedCall, type ListenerDeps } from '../deps.js';

/** The part of Bolt's client the Settings button uses: it opens a modal. */
export interface ModalClient {
  views: { open(args: webApi.ViewsOpenArguments): Promise<unknown> };
}

export type SettingsClickArgs = SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & {
  client: ModalClient;
};

/**
 * Who may tune a channel's feed: whoever may turn it on there (src/access.ts, `start_feed`: of the
 * organisation, no guest, BALANCE_ALLOWED_USERS and _CHANNELS when set), asked with the feed's
 * channel wherever the button is (the App Home is in none).
 */
export const tuneQuestion = (userId: string, teamId: string | undefined, channelId: string): Question => ({
  who: { userId, teamId },
  where: { channelId },
  what: 'start_feed',
});

/** The refusal, as the person is told it. */
export const refusalMessage = (deps: ListenerDeps, refusal: AccessDeniedError['refusal']): Message =>
  errorMessage(
    new AccessDeniedError(refusal, deps.access.allowedChannels, 'start_feed', deps.access.listable),
  );

/**
 * A feed's **Settings** (its confirmation, `/balance subscriptions`, the App Home): opens the
 * modal with the click's trigger_id, for those who may change the feed. Anyone else, a stale
 * button or a feed that ended is told why in a modal of its own: private on every surface, the
 * App Home included, where a click has no response_url.
 */
export function createFeedSettingsAction(deps: ListenerDeps) {
  return async ({ ack, body, action, client }: SettingsClickArgs): Promise<Tracked> => {
    await acknowledge(ack, deps.logger);
    const open = (view: webApi.ViewsOpenArguments['view']) =>
      countedCall(deps, 'views.open', () => client.views.open({ trigger_id: body.trigger_id, view }));
    const channelId =
      typeof action.value === 'string' && CHANNEL_ID.test(action.value) ? action.value : undefined;
    if (channelId === undefined) {
      deps.logger.warn({ action: action.action_id }, 'a button value the bot did not write');
      await open(settingsNoticeModal(staleButtonMessage()));
      return { outcome: 'stale_button' };
    }
    const refusal = await deps.access.refusal(tuneQuestion(body.user.id, body.user.team_id, channelId));
    if (refusal) {
      await open(settingsNoticeModal(refusalMessage(deps, refusal)));
      return { outcome: refusal };
    }
    const form = await deps.feed.settingsForm({ channelId });
    if (!form) {
      await open(settingsNoticeModal(feedReplies.notSubscribed()));
      return { outcome: 'not_subscribed' };
    }
    await open(settingsModal(form));
    return { outcome: 'ok' };
  };
}
