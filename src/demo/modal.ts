import { randomUUID } from 'node:crypto';
import type { RequestContext } from './requests.js';
import {
  APP_ID,
  DEMO_TEAM,
  DEMO_USER,
  type DemoModal,
  isObject,
  type Json,
  type PageInput,
  str,
  type Workspace,
} from './workspace.js';

/**
 * The demo's modals, as Slack runs them (docs/slack.md#modals): `views.open` shows the bot's
 * modal to you, Save sends `view_submission` with what you typed or picked, and the bot's
 * acknowledgement closes it, shows its errors under their inputs (keeping what you typed), or
 * replaces it.
 */

const MODAL_VIEW_ID = 'V0MODAL';

/** What the page sent of a modal's inputs (by block id: a value or several, strings), or undefined. */
export function pageInputs(raw: unknown): Record<string, PageInput> | undefined {
  if (!isObject(raw)) return undefined;
  const strings = (v: unknown) =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  return Object.fromEntries(
    Object.entries(raw).map(([blockId, input]): [string, PageInput] => {
      const fields = isObject(input) ? input : {};
      return [
        blockId,
        { type: str(fields.type) ?? '', value: str(fields.value) ?? null, values: strings(fields.values) },
      ];
    }),
  );
}

/** `views.open`: a modal for you, with a trigger from one of your clicks or commands. */
export function modalMethods(workspace: Workspace): Record<string, (args: Json) => Json> {
  return {
    'views.open': (args) => {
      const view = args.view;
      if (typeof args.trigger_id !== 'string') return { ok: false, error: 'invalid_trigger_id' };
      if (!isObject(view) || view.type !== 'modal') return { ok: false, error: 'invalid_arguments' };
      workspace.modal = { view: { ...view, id: MODAL_VIEW_ID }, errors: {}, typed: {} };
      workspace.changed();
      return { ok: true, view: { id: MODAL_VIEW_ID, ...view } };
    },
  };
}

type Option = { value?: unknown };
const optionsOf = (element: Json): Option[] =>
  Array.isArray(element.options) ? (element.options as Option[]) : [];

/** One input's state as Slack sends it in `view.state.values`, from what the page sent. */
function stateValue(element: Json, input: PageInput | undefined): Json {
  const type = str(element.type) ?? '';
  const value = input?.value ?? null;
  switch (type) {
    case 'static_select':
    case 'radio_buttons':
      return { type, selected_option: optionsOf(element).find((o) => o.value === value) ?? null };
    case 'multi_static_select':
      return {
        type,
        selected_options: optionsOf(element).filter((o) => input?.values?.includes(String(o.value))),
      };
    case 'timepicker':
      return { type, selected_time: value };
    default:
      return { type, value };
  }
}

/** `view.state.values` for the modal's input blocks. */
export function viewState(view: Json, typed: Readonly<Record<string, PageInput>>): Json {
  const values: Json = {};
  for (const block of Array.isArray(view.blocks) ? view.blocks : []) {
    if (!isObject(block) || block.type !== 'input' || !isObject(block.element)) continue;
    const blockId = str(block.block_id) ?? '';
    values[blockId] = { [str(block.element.action_id) ?? '']: stateValue(block.element, typed[blockId]) };
  }
  return values;
}

/** Reads the bot's acknowledgement of a submission: closed, errors under inputs, or another view. */
function afterAck(modal: DemoModal, ack: string): DemoModal | undefined {
  if (ack.trim() === '') return undefined;
  const answer: unknown = JSON.parse(ack);
  if (!isObject(answer)) return undefined;
  if (answer.response_action === 'errors' && isObject(answer.errors))
    return {
      ...modal,
      errors: Object.fromEntries(Object.entries(answer.errors).map(([k, v]) => [k, String(v)])),
    };
  if (answer.response_action === 'update' && isObject(answer.view))
    return { view: { ...answer.view, id: MODAL_VIEW_ID }, errors: {}, typed: {} };
  return undefined;
}

/** Save: the submission goes to the bot, and its acknowledgement decides what you see next. */
export async function submitModal(context: RequestContext, typed: Record<string, PageInput>): Promise<void> {
  const { workspace } = context;
  const modal = workspace.modal;
  if (!modal) return;
  const view = {
    ...modal.view,
    team_id: DEMO_TEAM,
    app_id: APP_ID,
    state: { values: viewState(modal.view, typed) },
  };
  const payload = {
    type: 'view_submission',
    team: { id: DEMO_TEAM, domain: 'demo' },
    user: { id: DEMO_USER, username: 'you', name: 'you', team_id: DEMO_TEAM },
    api_app_id: APP_ID,
    token: 'demo-verification-token',
    trigger_id: `${Date.now()}.${randomUUID().slice(0, 8)}`,
    view: { ...view, hash: `${Date.now()}.demo`, private_metadata: str(modal.view.private_metadata) ?? '' },
  };
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const ack = await context.bot.send(body, 'application/x-www-form-urlencoded', 'Saving the form');
  // Not taken (Slack's notice says so): the modal stays as it was, with what you typed.
  workspace.modal = ack === undefined ? { ...modal, typed } : afterAck({ ...modal, typed }, ack);
  workspace.changed();
}
