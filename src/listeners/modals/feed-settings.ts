import type { SlackViewMiddlewareArgs, ViewSubmitAction } from '@slack/bolt';
import { readSettingsForm } from '../../feed/settings.js';
import { viewListener } from '../../pipeline/kinds.js';
import type { Tracked } from '../../pipeline/tracked.js';
import { feedReplies } from '../../views/feed.js';
import { settingsNoticeModal } from '../../views/feed-settings.js';
import { refusalMessage, tuneQuestion } from '../actions/feed-settings.js';
import type { ListenerDeps } from '../deps.js';
import type { Answer } from '../workspaces/not-connected.js';

export type SettingsSubmitArgs = SlackViewMiddlewareArgs<ViewSubmitAction>;

/**
 * The Settings modal's submission: asked of the access rules again (the person may have lost the
 * right since the modal opened), read and checked (exact minimums, a real IANA zone), each wrong
 * input answered under itself (`response_action: errors`), then saved; the channel is told what
 * changed through the outbox, once (src/feed/tuning.ts).
 */
export function createFeedSettingsSubmit(deps: ListenerDeps) {
  return async ({ ack, body, view }: SettingsSubmitArgs): Promise<Tracked> => {
    const subscriptionId = view.private_metadata;
    const userId = body.user.id;
    const form = await deps.feed.settingsForm({ subscriptionId });
    if (!form) {
      await ack({ response_action: 'update', view: settingsNoticeModal(feedReplies.notSubscribed()) });
      return { outcome: 'not_subscribed' };
    }
    const refusal = await deps.access.refusal(tuneQuestion(userId, body.user.team_id, form.channelId));
    if (refusal) {
      await ack({ response_action: 'update', view: settingsNoticeModal(refusalMessage(deps, refusal)) });
      return { outcome: refusal };
    }
    const read = readSettingsForm(
      view.state.values,
      form.coins.map((c) => c.id),
    );
    if (!read.ok) {
      await ack({ response_action: 'errors', errors: read.errors });
      return { outcome: 'invalid_input' };
    }
    const saved = await deps.feed.saveSettings({
      subscriptionId,
      userId,
      settings: read.settings,
      digest: read.digest,
    });
    if (saved.kind === 'ended') {
      await ack({ response_action: 'update', view: settingsNoticeModal(feedReplies.notSubscribed()) });
      return { outcome: 'not_subscribed' };
    }
    await ack();
    return { outcome: saved.kind === 'saved' ? 'ok' : 'unchanged' };
  };
}

/** A workspace whose payment account is not connected: the modal says so, naming who can connect it. */
export const submitNotConnected: Answer<SettingsSubmitArgs> = (nc, name) =>
  viewListener<SettingsSubmitArgs>(nc.deps, name, async ({ ack }) => {
    await ack({ response_action: 'update', view: settingsNoticeModal(nc.answer.message) });
    return { outcome: 'not_connected' };
  });
