import type { ViewOutput, ViewSubmitAction } from '@slack/bolt';
import type { KnownBlock, ModalView } from '@slack/types';
import { ACTION_FEED_SETTINGS, VIEW_FEED_SETTINGS } from '../../src/domain/actions.js';
import {
  createFeedSettingsAction,
  type SettingsClickArgs,
} from '../../src/listeners/actions/feed-settings.js';
import type { ListenerDeps } from '../../src/listeners/deps.js';
import {
  createFeedSettingsSubmit,
  type SettingsSubmitArgs,
} from '../../src/listeners/modals/feed-settings.js';
import { actionListener, viewListener } from '../../src/pipeline/kinds.js';
import { buttonArgs, captureLogs, HOME_TEAM } from './bolt.js';

/**
 * A feed's Settings as a person uses it: a click on its button (the modal Slack would open is
 * recorded) and a Save of that modal, with what the person typed or picked over what it showed.
 * Both go through the real listeners, in their request pipeline (the outcome is logged).
 */

type StateValue = ViewOutput['state']['values'][string][string];
/** What a person changes in one input: text typed, one option picked by value, several, or a time. */
type Edit = string | readonly string[];

const EDITED: Record<string, (element: Record<string, unknown>, edit: Edit | undefined) => StateValue> = {
  plain_text_input: (e, edit) => ({
    type: 'plain_text_input',
    value: typeof edit === 'string' ? edit : ((e.initial_value as string | undefined) ?? null),
  }),
  timepicker: (e, edit) => ({
    type: 'timepicker',
    selected_time: typeof edit === 'string' ? edit : (e.initial_time as string),
  }),
  static_select: (e, edit) => ({
    type: 'static_select',
    selected_option: picked(e, edit) ?? (e.initial_option as never),
  }),
  radio_buttons: (e, edit) => ({
    type: 'radio_buttons',
    selected_option: picked(e, edit) ?? (e.initial_option as never),
  }),
  multi_static_select: (e, edit) => ({
    type: 'multi_static_select',
    selected_options:
      edit === undefined
        ? ((e.initial_options as never) ?? [])
        : ((e.options as { value: string }[]).filter((o) => [edit].flat().includes(o.value)) as never),
  }),
};

function picked(element: Record<string, unknown>, edit: Edit | undefined) {
  if (typeof edit !== 'string') return undefined;
  const option = (element.options as { value: string }[]).find((o) => o.value === edit);
  if (!option) throw new Error(`no option ${edit}`);
  return option as never;
}

/** The state Slack sends on Save: each input as the modal showed it, `edits` (by block id) over it. */
export function stateOf(view: ModalView, edits: Readonly<Record<string, Edit>> = {}): ViewOutput['state'] {
  const values: ViewOutput['state']['values'] = {};
  for (const block of view.blocks as KnownBlock[]) {
    if (block.type !== 'input' || block.block_id === undefined) continue;
    const element = block.element as unknown as Record<string, unknown>;
    const edit = EDITED[String(element.type)];
    if (!edit) throw new Error(`no stand-in for ${String(element.type)}`);
    values[block.block_id] = { [String(element.action_id)]: edit(element, edits[block.block_id]) };
  }
  return { values };
}

export function settingsListeners(deps: ListenerDeps) {
  const logs = captureLogs();
  const logged = { ...deps, logger: logs.logger };
  const open = actionListener<SettingsClickArgs>(
    logged,
    ACTION_FEED_SETTINGS,
    createFeedSettingsAction(logged),
  );
  const submit = viewListener<SettingsSubmitArgs>(
    logged,
    VIEW_FEED_SETTINGS,
    createFeedSettingsSubmit(logged),
  );
  const outcome = () => logs.lines.at(-1)?.outcome;

  return {
    /** `userId` clicks a Settings button whose value is `value` (a channel id); what Slack opened, if anything. */
    async click(
      value: string,
      userId = 'U0ANA',
    ): Promise<{ opened: ModalView | undefined; outcome: unknown }> {
      const { args } = buttonArgs(value, { actionId: ACTION_FEED_SETTINGS });
      let opened: ModalView | undefined;
      await open({
        ...args,
        body: { ...args.body, user: { id: userId, username: userId, team_id: HOME_TEAM } },
        client: {
          views: {
            open: async ({ view }) => {
              opened = view as ModalView;
              return { ok: true };
            },
          },
        },
      });
      return { opened, outcome: outcome() };
    },

    /** `userId` saves `view` with `edits`; what the submission was acknowledged with. */
    async save(view: ModalView, edits: Readonly<Record<string, Edit>> = {}, userId = 'U0ANA') {
      const output: ViewOutput = {
        id: 'V0SETTINGS',
        callback_id: view.callback_id ?? '',
        team_id: HOME_TEAM,
        app_id: 'A0APP',
        bot_id: 'B0BOT',
        title: { type: 'plain_text', text: view.title.text },
        type: 'modal',
        blocks: view.blocks,
        close: null,
        submit: null,
        state: stateOf(view, edits),
        hash: '1.abc',
        private_metadata: view.private_metadata ?? '',
        root_view_id: null,
        previous_view_id: null,
        clear_on_close: false,
        notify_on_close: false,
      };
      const body: ViewSubmitAction = {
        type: 'view_submission',
        team: { id: HOME_TEAM, domain: 'home' },
        user: { id: userId, name: userId, team_id: HOME_TEAM },
        view: output,
        api_app_id: 'A0APP',
        token: 'deprecated',
        trigger_id: '1.2.3',
      };
      const acks: unknown[] = [];
      await submit({
        payload: output,
        view: output,
        body,
        ack: async (answer?: unknown) => {
          acks.push(answer);
        },
        respond: async () => {
          throw new Error('a submission is answered in its ack');
        },
      });
      return { ack: acks[0], acks, outcome: outcome() };
    },
  };
}
