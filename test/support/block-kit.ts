import { expect } from 'vitest';
import {
  attachmentProblems,
  chartProblems,
  dataTableProblems,
  MAX_CHARTS,
  selectProblems,
} from './block-kit-charts.js';
import { inputElementProblems, modalFieldProblems } from './block-kit-inputs.js';

/**
 * A Block Kit checker for everything the bot sends, encoding docs/slack.md on its own
 * (it does not import the bot's limits, so a wrong constant there cannot agree with it). It also
 * checks mrkdwn safety: every `<…>` token must be a date, a user or channel mention or an http(s)
 * link, and `&` only appears in the three entities, so service or user text cannot ping or spoof.
 */

const MAX_BLOCKS = 50;
const MAX_MESSAGE_CHARS = 12_000;
const MAX_TOP_LEVEL_TEXT = 4000;

const SAFE_TOKEN = [
  /^<!date\^\d+\^[^|<>]+\|[^<>]+>$/,
  /^<@[UW][A-Z0-9]+>$/,
  /^<#[CGD][A-Z0-9]+>$/,
  /^<https?:\/\/[^\s|<>]+(\|[^<>|]+)?>$/,
];

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Problems with a `<`, `>` or `&` in Slack text. */
export function markupProblems(text: string, where: string, allowTokens: boolean): string[] {
  const problems: string[] = [];
  const withoutTokens = text.replace(/<[^<>]*>/g, (token) => {
    if (!allowTokens || !SAFE_TOKEN.some((re) => re.test(token)))
      problems.push(`${where}: unsafe token ${token.slice(0, 80)}`);
    return '';
  });
  if (/[<>]/.test(withoutTokens)) problems.push(`${where}: unescaped < or >`);
  if (/&(?!amp;|lt;|gt;)/.test(withoutTokens)) problems.push(`${where}: unescaped &`);
  return problems;
}

function textObject(value: unknown, where: string, opts: { plainOnly?: boolean; max: number }): string[] {
  if (!isObject(value)) return [`${where}: missing text object`];
  const problems: string[] = [];
  const { type, text } = value;
  if (type !== 'plain_text' && type !== 'mrkdwn') problems.push(`${where}: text type ${String(type)}`);
  if (opts.plainOnly && type !== 'plain_text') problems.push(`${where}: must be plain_text`);
  if (typeof text !== 'string' || text.trim().length === 0) return [...problems, `${where}: empty text`];
  if (text.length > opts.max) problems.push(`${where}: ${text.length} chars > ${opts.max}`);
  if ('emoji' in value && type !== 'plain_text') problems.push(`${where}: emoji on mrkdwn`);
  if ('verbatim' in value && type !== 'mrkdwn') problems.push(`${where}: verbatim on plain_text`);
  problems.push(...markupProblems(text, where, type === 'mrkdwn'));
  return problems;
}

function element(value: unknown, where: string, actionIds: Set<string>): string[] {
  if (isObject(value) && value.type === 'static_select') return selectProblems(value, where, actionIds);
  if (!isObject(value) || value.type !== 'button')
    return [`${where}: unsupported element ${String(isObject(value) && value.type)}`];
  const problems = textObject(value.text, `${where}.text`, { plainOnly: true, max: 75 });
  const { action_id: actionId, url, value: buttonValue, style } = value;
  if (typeof actionId !== 'string' || actionId.length === 0 || actionId.length > 255)
    problems.push(`${where}: action_id`);
  else if (actionIds.has(actionId)) problems.push(`${where}: duplicate action_id ${actionId}`);
  else actionIds.add(actionId);
  if (url !== undefined) {
    if (typeof url !== 'string' || url.length > 3000 || !/^https?:\/\//.test(url))
      problems.push(`${where}: bad url`);
  }
  if (buttonValue !== undefined && (typeof buttonValue !== 'string' || buttonValue.length > 2000)) {
    problems.push(`${where}: bad value`);
  }
  if (style !== undefined && style !== 'primary' && style !== 'danger') problems.push(`${where}: bad style`);
  return problems;
}

function block(value: unknown, where: string, blockIds: Set<string>, actionIds: Set<string>): string[] {
  if (!isObject(value)) return [`${where}: not an object`];
  const problems: string[] = [];
  const blockId = value.block_id;
  if (blockId !== undefined) {
    if (typeof blockId !== 'string' || blockId.length === 0 || blockId.length > 255)
      problems.push(`${where}: block_id`);
    else if (blockIds.has(blockId)) problems.push(`${where}: duplicate block_id ${blockId}`);
    else blockIds.add(blockId);
  }
  switch (value.type) {
    case 'header':
      return [...problems, ...textObject(value.text, `${where}.text`, { plainOnly: true, max: 150 })];
    case 'section': {
      if (value.text === undefined && value.fields === undefined)
        problems.push(`${where}: neither text nor fields`);
      if (value.text !== undefined) problems.push(...textObject(value.text, `${where}.text`, { max: 3000 }));
      if (value.fields !== undefined) {
        const fields = value.fields;
        if (!Array.isArray(fields) || fields.length === 0 || fields.length > 10)
          problems.push(`${where}: 1..10 fields`);
        else
          problems.push(...fields.flatMap((f, i) => textObject(f, `${where}.fields[${i}]`, { max: 2000 })));
      }
      return problems;
    }
    case 'context': {
      const els = value.elements;
      if (!Array.isArray(els) || els.length === 0 || els.length > 10)
        return [...problems, `${where}: 1..10 elements`];
      problems.push(...els.flatMap((e, i) => textObject(e, `${where}.elements[${i}]`, { max: 3000 })));
      return problems;
    }
    case 'actions': {
      const els = value.elements;
      if (!Array.isArray(els) || els.length === 0 || els.length > 25)
        return [...problems, `${where}: 1..25 elements`];
      problems.push(...els.flatMap((e, i) => element(e, `${where}.elements[${i}]`, actionIds)));
      return problems;
    }
    case 'divider':
      return problems;
    case 'data_visualization':
      return [...problems, ...chartProblems(value, where)];
    case 'data_table':
      return [...problems, ...dataTableProblems(value, where)];
    case 'input': {
      // Modals only: a label, an optional hint and one input element (./block-kit-inputs.ts).
      problems.push(...textObject(value.label, `${where}.label`, { plainOnly: true, max: 2000 }));
      if (value.hint !== undefined)
        problems.push(...textObject(value.hint, `${where}.hint`, { plainOnly: true, max: 2000 }));
      problems.push(...inputElementProblems(value.element, `${where}.element`));
      return problems;
    }
    default:
      return [...problems, `${where}: unknown block type ${String(value.type)}`];
  }
}

function textChars(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + textChars(v), 0);
  if (isObject(value)) return Object.values(value).reduce((n: number, v) => n + textChars(v), 0);
  return 0;
}

/** Every reason Slack would reject (or mis-render) this message; empty when it is fine. */
export function blockKitProblems(
  message: unknown,
  opts: { requireText?: boolean; maxBlocks?: number } = {},
): string[] {
  if (!isObject(message)) return ['message: not an object'];
  const problems: string[] = [];
  const { text, blocks } = message;
  if (opts.requireText !== false) {
    if (typeof text !== 'string' || text.trim() === '') problems.push('text: missing top-level text');
    else {
      if (text.length > MAX_TOP_LEVEL_TEXT)
        problems.push(`text: ${text.length} chars > ${MAX_TOP_LEVEL_TEXT}`);
      problems.push(...markupProblems(text, 'text', true));
    }
  }
  if (!Array.isArray(blocks) || blocks.length === 0) return [...problems, 'blocks: none'];
  const maxBlocks = opts.maxBlocks ?? MAX_BLOCKS;
  if (blocks.length > maxBlocks) problems.push(`blocks: ${blocks.length} > ${maxBlocks}`);
  const chars = textChars(blocks);
  if (chars >= MAX_MESSAGE_CHARS) problems.push(`blocks: ${chars} characters >= ${MAX_MESSAGE_CHARS}`);
  const blockIds = new Set<string>();
  const actionIds = new Set<string>();
  problems.push(...blocks.flatMap((b, i) => block(b, `blocks[${i}]`, blockIds, actionIds)));
  const charts = blocks.filter((b) => isObject(b) && b.type === 'data_visualization').length;
  if (charts > MAX_CHARTS) problems.push(`blocks: ${charts} charts > ${MAX_CHARTS}`);
  problems.push(...attachmentProblems(message.attachments));
  return problems;
}

/** Every reason Slack would refuse this modal (views.open, a response_action update); empty when it is fine. */
export function modalProblems(view: unknown): string[] {
  if (!isObject(view)) return ['view: not an object'];
  return [...modalFieldProblems(view), ...blockKitProblems(view, { requireText: false, maxBlocks: 100 })];
}

/** The App Home holds 100 blocks where a message holds 50; it has no top-level text. */
export const HOME_VIEW = { requireText: false, maxBlocks: 100 } as const;

export function expectValidMessage(
  message: unknown,
  opts?: { requireText?: boolean; maxBlocks?: number },
): void {
  expect(blockKitProblems(message, opts)).toEqual([]);
}

/** All the visible text of a message, for asserting what a reader sees. */
export function visibleText(message: unknown): string {
  const parts: string[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (isObject(value)) {
      if ((value.type === 'mrkdwn' || value.type === 'plain_text') && typeof value.text === 'string')
        parts.push(value.text);
      else Object.values(value).forEach(visit);
    }
  };
  visit(isObject(message) ? message.blocks : undefined);
  return parts.join('\n');
}
