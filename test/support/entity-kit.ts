import { CustomFieldType, type EntityMetadata } from '@slack/types';
import { expect } from 'vitest';

/**
 * An independent check of the Work Objects the bot sends (chat.unfurl, chat.postMessage and
 * replies' `metadata.entities`, entity.presentDetails' `metadata`), by Slack's pages
 * (docs/slack.md#work-objects): what Slack would drop with `invalid_metadata_format`, and its
 * limits on actions. Written from the docs, not from src/views/invoice-entity.ts.
 */
const HTTP = /^https?:\/\/\S+$/;
const FIELD_TYPES: ReadonlySet<string> = new Set(Object.values(CustomFieldType));
/** Slack shows at most this many actions of each kind. */
const MAX_PRIMARY = 2;
const MAX_OVERFLOW = 5;

export function entityProblems(entity: EntityMetadata, { unfurl = false } = {}): string[] {
  const problems: string[] = [];
  const problem = (what: string) => problems.push(what);
  if (!entity.entity_type.startsWith('slack#/entities/')) problem(`entity_type ${entity.entity_type}`);
  if (!entity.external_ref.id) problem('external_ref.id is empty');
  if (!HTTP.test(entity.url)) problem(`url ${entity.url} is not http(s)`);
  if (unfurl && !entity.app_unfurl_url) problem('chat.unfurl needs app_unfurl_url');
  if (!unfurl && entity.app_unfurl_url) problem('app_unfurl_url is for chat.unfurl only');
  const payload = entity.entity_payload;
  if (!payload.attributes.title.text.trim()) problem('attributes.title.text is empty');
  const fields = payload.custom_fields ?? [];
  const keys = fields.map((f) => f.key);
  if (new Set(keys).size !== keys.length) problem(`custom_fields keys repeat: ${keys.join(',')}`);
  for (const f of fields) {
    if (!f.label.trim()) problem(`custom field ${f.key} has no label`);
    if (!FIELD_TYPES.has(f.type)) problem(`custom field ${f.key} has type ${f.type}`);
    if (f.type === CustomFieldType.String && (typeof f.value !== 'string' || f.value === ''))
      problem(`custom field ${f.key} is an empty string`);
    if (f.type === CustomFieldType.Timestamp && !Number.isInteger(f.value))
      problem(`custom field ${f.key} is not whole seconds`);
  }
  for (const key of payload.display_order ?? [])
    if (!keys.includes(key)) problem(`display_order names ${key}, no field`);
  const primary = payload.actions?.primary_actions ?? [];
  const overflow = payload.actions?.overflow_actions ?? [];
  if (primary.length > MAX_PRIMARY) problem(`${primary.length} primary actions`);
  if (overflow.length > MAX_OVERFLOW) problem(`${overflow.length} overflow actions`);
  const ids = [...primary, ...overflow].map((a) => a.action_id);
  if (new Set(ids).size !== ids.length) problem(`action ids repeat: ${ids.join(',')}`);
  for (const a of [...primary, ...overflow]) {
    if (!a.text.trim() || !a.action_id) problem(`action ${a.action_id} has no text or id`);
    if (a.url !== undefined && !HTTP.test(a.url)) problem(`action ${a.action_id} url is not http(s)`);
  }
  return problems;
}

export function expectValidEntity(
  entity: EntityMetadata | undefined,
  options: { unfurl?: boolean } = {},
): void {
  expect(entity, 'no entity').toBeDefined();
  if (entity) expect(entityProblems(entity, options)).toEqual([]);
}
