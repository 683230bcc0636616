import { randomUUID } from 'node:crypto';
import { escapeHtml, renderMrkdwn } from './render.js';
import type { RequestContext } from './requests.js';
import { event } from './requests.js';
import {
  APP_ID,
  DEMO_CHANNEL,
  DEMO_NAMES,
  DEMO_TEAM,
  DEMO_USER,
  type Flexpane,
  isObject,
  type Json,
  str,
  type Workspace,
} from './workspace.js';

/**
 * Work Objects in the local demo (docs/slack.md#work-objects): the card Slack draws from a
 * message's or an unfurl's `metadata.entities`, and the side panel (flexpane) the bot fills with
 * `entity.presentDetails` when you click the card. Drawn by the page itself, from what the bot
 * sent; every string HTML-escaped.
 */

/** A form-encoded argument arrives as JSON text. */
const parsed = (value: unknown): Json | undefined => {
  if (isObject(value)) return value;
  if (typeof value !== 'string') return undefined;
  try {
    const json: unknown = JSON.parse(value);
    return isObject(json) ? json : undefined;
  } catch {
    return undefined;
  }
};

/** The entities in a message's or an unfurl's metadata. */
export const entitiesOf = (metadata: unknown): Json[] => {
  const meta = parsed(metadata);
  return Array.isArray(meta?.entities) ? meta.entities.filter(isObject) : [];
};

const payloadOf = (entity: Json): Json => (isObject(entity.entity_payload) ? entity.entity_payload : {});
const titleOf = (entity: Json): string => {
  const attributes = payloadOf(entity).attributes;
  return isObject(attributes) && isObject(attributes.title) ? (str(attributes.title.text) ?? '') : '';
};
const fieldsOf = (entity: Json): Json[] => {
  const fields = payloadOf(entity).custom_fields;
  return Array.isArray(fields) ? fields.filter(isObject) : [];
};

/** A field's value as Slack shows it: a timestamp in your own zone, markdown's mentions by name, text as it is. */
function valueHtml(field: Json): string {
  if (field.type === 'slack#/types/timestamp' && typeof field.value === 'number') {
    const iso = new Date(field.value * 1000).toISOString();
    return `<time class="bk-date" data-ts="${field.value}" data-format="{date_short_pretty} at {time}" datetime="${iso}">${iso}</time>`;
  }
  const text = String(field.value ?? '');
  const html = field.format === 'markdown' ? renderMrkdwn(text, DEMO_NAMES) : escapeHtml(text);
  return html.replace(/\n/g, '<br>');
}

const fieldsHtml = (fields: readonly Json[]) =>
  fields
    .map(
      (f) =>
        `<div class="wo-field${f.long ? ' wo-long' : ''}"><span class="wo-label">${escapeHtml(str(f.label) ?? '')}</span><span class="wo-value" data-key="${escapeHtml(str(f.key) ?? '')}">${valueHtml(f)}</span></div>`,
    )
    .join('');

/** The card of each entity, a button that opens its side panel. */
export function entityCardsHtml(metadata: unknown, ts: string): string {
  return entitiesOf(metadata)
    .map((entity) => {
      const ref = isObject(entity.external_ref) ? (str(entity.external_ref.id) ?? '') : '';
      return `<button type="button" class="wo-card" data-entity="${escapeHtml(ts)}" data-ref="${escapeHtml(ref)}" data-entity-url="${escapeHtml(str(entity.url) ?? '')}" title="Open the invoice's details"><span class="wo-kind">Invoice · Crypto Payments</span><span class="wo-title">${escapeHtml(titleOf(entity))}</span>${fieldsHtml(fieldsOf(entity))}</button>`;
    })
    .join('');
}

/** The panel's buttons: the bot's own, and a link for one with a URL. */
function actionsHtml(entity: Json): string {
  const actions = payloadOf(entity).actions;
  if (!isObject(actions)) return '';
  const all = [
    ...(Array.isArray(actions.primary_actions) ? actions.primary_actions : []),
    ...(Array.isArray(actions.overflow_actions) ? actions.overflow_actions : []),
  ].filter(isObject);
  return `<div class="wo-actions">${all
    .map((a) => {
      const label = escapeHtml(str(a.text) ?? '');
      const url = str(a.url);
      return url && /^https?:\/\//.test(url)
        ? `<a class="bk-button" href="${escapeHtml(url)}" target="_blank" rel="noopener noreferrer">${label}</a>`
        : `<button type="button" class="bk-button" data-panel-action="${escapeHtml(str(a.action_id) ?? '')}">${label}</button>`;
    })
    .join('')}</div>`;
}

/** The side panel, when one is open: the invoice, or the error view Slack would show. */
export function flexpaneHtml(pane: Flexpane | undefined): string {
  if (!pane) return '';
  const close = '<button type="button" class="wo-close" data-close-panel aria-label="Close">×</button>';
  const { error, metadata } = pane;
  const body = error
    ? `<h2 class="wo-title">${escapeHtml(str(error.custom_title) ?? `Slack shows: ${str(error.status) ?? 'error'}`)}</h2><p class="wo-error" data-status="${escapeHtml(str(error.status) ?? '')}">${escapeHtml(str(error.custom_message) ?? '')}</p>`
    : metadata
      ? `<h2 class="wo-title">${escapeHtml(titleOf(metadata))}</h2>${actionsHtml(metadata)}${fieldsHtml(fieldsOf(metadata))}`
      : '';
  return `<aside class="flexpane" aria-label="Invoice details">${close}${body}</aside>`;
}

/** `entity.presentDetails`: what the panel shows next. */
export function entityMethods(workspace: Workspace): Record<string, (args: Json) => Json> {
  return {
    'entity.presentDetails': (args) => {
      if (!str(args.trigger_id)) return { ok: false, error: 'invalid_trigger_id' };
      workspace.flexpane = { metadata: parsed(args.metadata), error: parsed(args.error) };
      workspace.changed();
      return { ok: true };
    },
  };
}

const triggerId = () => `${Date.now()}.${randomUUID().slice(0, 8)}`;

/** A click on a card: Slack asks the bot for its side panel (`entity_details_requested`). */
export async function openEntity(
  context: RequestContext,
  ts: string,
  refId: string,
  url: string,
): Promise<void> {
  const link = URL.canParse(url) ? { url, domain: new URL(url).hostname } : { url, domain: '' };
  await context.bot.send(
    event({
      type: 'entity_details_requested',
      user: DEMO_USER,
      trigger_id: triggerId(),
      external_ref: { id: refId, type: 'invoice' },
      entity_url: url,
      link,
      user_locale: 'en-US',
      event_ts: `${Date.now() / 1000}`,
      channel: DEMO_CHANNEL,
      message_ts: ts,
    }),
    'application/json',
    'The invoice details',
  );
}

/** A click on one of the side panel's buttons: `block_actions` from the panel (`entity_detail`). */
export async function panelClick(
  context: RequestContext & { workspace: { flexpane?: Flexpane } },
  actionId: string,
) {
  const entity = context.workspace.flexpane?.metadata;
  const actions = entity ? payloadOf(entity).actions : undefined;
  const found = (
    isObject(actions) ? [actions.primary_actions, actions.overflow_actions].flat().filter(isObject) : []
  ).find((a) => a.action_id === actionId);
  if (!found) return;
  const payload = {
    type: 'block_actions',
    user: { id: DEMO_USER, username: 'you', name: 'you', team_id: DEMO_TEAM },
    team: { id: DEMO_TEAM, domain: 'demo' },
    api_app_id: APP_ID,
    token: 'demo-verification-token',
    container: { type: 'entity_detail' },
    trigger_id: triggerId(),
    actions: [
      {
        type: 'button',
        action_id: actionId,
        block_id: 'entity_actions',
        value: str(found.value),
        text: { type: 'plain_text', text: str(found.text) ?? '' },
        action_ts: `${Date.now() / 1000}`,
      },
    ],
  };
  await context.bot.send(
    new URLSearchParams({ payload: JSON.stringify(payload) }).toString(),
    'application/x-www-form-urlencoded',
    'The button',
  );
}

export const ENTITY_CSS = `
.wo-card { display: block; width: 100%; max-width: 520px; text-align: left; margin: 6px 0; padding: 8px 12px; border: 1px solid #ddd; border-left: 4px solid #1f3a5f; border-radius: 6px; background: #fff; font: inherit; cursor: pointer; }
.wo-card:hover { background: #f8f8f8; }
.wo-kind { display: block; font-size: 12px; color: #616061; }
.wo-title { display: block; font-weight: 700; margin: 2px 0 6px; font-size: 15px; }
.wo-field { display: inline-block; margin: 0 16px 4px 0; vertical-align: top; }
.wo-field.wo-long { display: block; }
.wo-label { display: block; font-size: 12px; color: #616061; }
.flexpane { position: fixed; top: 0; right: 0; bottom: 0; width: 380px; overflow: auto; background: #fff; border-left: 1px solid #ddd; box-shadow: -4px 0 12px rgba(0,0,0,.08); padding: 16px 20px; z-index: 10; }
.flexpane .wo-field { display: block; margin-bottom: 10px; }
.wo-close { position: absolute; top: 8px; right: 12px; border: 0; background: none; font-size: 22px; cursor: pointer; }
.wo-actions { display: flex; gap: 8px; margin: 8px 0 14px; flex-wrap: wrap; }
.wo-actions a.bk-button { text-decoration: none; color: inherit; }
.wo-error { color: #8a1c1c; }
`;
