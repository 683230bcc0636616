import type {
  ActionsBlock,
  Button,
  ContextBlock,
  DividerBlock,
  HeaderBlock,
  KnownBlock,
  MessageAttachment,
  SectionBlock,
} from '@slack/types';
import { cut } from '../text.js';
import { CHART_LIMITS, type ChartBlock } from './charts.js';
import { escapeText, httpUrl, join, type Mrkdwn, truncate } from './mrkdwn.js';

/**
 * Block Kit builders that respect Slack's limits (docs/slack.md#block-kit) whatever they are given:
 * every text is cut to its maximum with "…" and is never empty, so a message built from them is
 * never rejected for size.
 */

export const LIMITS = {
  blocks: 50,
  headerText: 150,
  sectionText: 3000,
  fields: 10,
  fieldText: 2000,
  contextElements: 10,
  contextText: 3000,
  buttonText: 75,
  buttonValue: 2000,
  topLevelText: 3000,
  /** Users report `msg_blocks_too_long` from about 13k characters of block text. */
  messageChars: 12_000,
} as const;

/** What every view returns: blocks plus the top-level `text` used for notifications and screen readers. */
export interface Message {
  text: string;
  blocks: (KnownBlock | ChartBlock)[];
  /** A `table` block goes here, not in `blocks` (docs/slack.md#charts-and-tables). */
  attachments?: MessageAttachment[];
}

/** Slack rejects empty text objects; a dash says "nothing" visibly. */
const nonEmpty = (text: string) => (text.trim() === '' ? '—' : text);

/** A conservative count of a message's block text: its JSON, never less than Slack's count. */
const blocksChars = (blocks: Message['blocks']): number => JSON.stringify(blocks).length;

/** Top-level text: escaped and cut. */
export function fallbackText(text: Mrkdwn): string {
  return nonEmpty(truncate(text.text, LIMITS.topLevelText));
}

export function header(raw: string): HeaderBlock {
  return { type: 'header', text: plain(raw, LIMITS.headerText) };
}

/** A block of mrkdwn text, with a button beside it when one is given. */
export function section(text: Mrkdwn, accessory?: Button): SectionBlock {
  return {
    type: 'section',
    text: { type: 'mrkdwn', text: nonEmpty(truncate(text.text, LIMITS.sectionText)) },
    ...(accessory ? { accessory } : {}),
  };
}

/**
 * A block of mrkdwn text, whole: for an addition to a message (`appendWithin`), which is refused
 * when its text is longer than Slack allows rather than cut inside a line or an amount.
 */
export const wholeSection = (text: Mrkdwn): SectionBlock => ({
  type: 'section',
  text: { type: 'mrkdwn', text: nonEmpty(text.text) },
});

/** A one-element context block, whole (`wholeSection`). */
export const wholeContext = (text: Mrkdwn): ContextBlock => ({
  type: 'context',
  elements: [{ type: 'mrkdwn', text: nonEmpty(text.text) }],
});

export const divider = (): DividerBlock => ({ type: 'divider' });

/** Fields in sections of at most ten, two columns wide in Slack. */
export function fieldSections(fields: readonly Mrkdwn[]): SectionBlock[] {
  const sections: SectionBlock[] = [];
  for (let i = 0; i < fields.length; i += LIMITS.fields) {
    sections.push({
      type: 'section',
      fields: fields.slice(i, i + LIMITS.fields).map((f) => ({
        type: 'mrkdwn' as const,
        text: nonEmpty(truncate(f.text, LIMITS.fieldText)),
      })),
    });
  }
  return sections;
}

export function context(...elements: Mrkdwn[]): ContextBlock {
  return {
    type: 'context',
    elements: elements.slice(0, LIMITS.contextElements).map((e) => ({
      type: 'mrkdwn' as const,
      text: nonEmpty(truncate(e.text, LIMITS.contextText)),
    })),
  };
}

/** A URL button, or `undefined` when the URL is not http(s) or is too long for Slack. */
export function linkButton(label: string, rawUrl: string, actionId: string): Button | undefined {
  const url = httpUrl(rawUrl);
  if (url === undefined) return undefined;
  return { type: 'button', action_id: actionId, text: plain(label, LIMITS.buttonText), url };
}

export function actionButton(label: string, actionId: string, value: string): Button {
  return {
    type: 'button',
    action_id: actionId,
    text: plain(label, LIMITS.buttonText),
    value: cut(value, LIMITS.buttonValue),
  };
}

/** A row of buttons; optional ones (`undefined`) are left out, and the last is never optional. */
export function actions(blockId: string, ...elements: [...(Button | undefined)[], Button]): ActionsBlock {
  return {
    type: 'actions',
    block_id: blockId,
    elements: elements.filter((e): e is Button => e !== undefined),
  };
}

function plain(raw: string, max: number) {
  return { type: 'plain_text' as const, text: nonEmpty(truncate(escapeText(raw), max)), emoji: true };
}

type AnyBlock = Message['blocks'][number];

/** Whether each text of `block` is within Slack's limit for it. */
function textsFit(block: AnyBlock): boolean {
  switch (block.type) {
    case 'header':
      return block.text.text.length <= LIMITS.headerText;
    case 'section': {
      const fields = block.fields ?? [];
      return (
        (block.text === undefined || block.text.text.length <= LIMITS.sectionText) &&
        fields.length <= LIMITS.fields &&
        fields.every((f) => f.text.length <= LIMITS.fieldText)
      );
    }
    case 'context':
      return (
        block.elements.length <= LIMITS.contextElements &&
        block.elements.every((e) => !('text' in e) || e.text.length <= LIMITS.contextText)
      );
    default:
      return true;
  }
}

/**
 * Whether `blocks` are within Slack's limits for a message's: how many (charts among them), each
 * block's texts, and their characters in all.
 */
function blocksWithinLimits(blocks: Message['blocks']): boolean {
  return (
    blocks.length <= LIMITS.blocks &&
    blocks.filter((b) => b.type === 'data_visualization').length <= CHART_LIMITS.perMessage &&
    blocks.every(textsFit) &&
    blocksChars(blocks) <= LIMITS.messageChars
  );
}

/** Blocks and words added to a message together: the blocks after its own, the words after its text. */
export interface Addition {
  blocks?: Message['blocks'];
  /** Already safe, appended whole: never cut inside an amount. */
  text?: string;
}

/**
 * The one way a view adds to a message "if it still fits": `message` with the first of `tries`
 * that keeps what it changes within Slack's limits (its blocks: `blocksWithinLimits`; its text:
 * `textChars`, Slack's limit or less when the rest is kept for something else), so callers list
 * what they would add, then less (fewer lines, the text alone, a count). `message` unchanged
 * when none fits.
 */
export function appendWithin(
  message: Message,
  tries: readonly Addition[],
  textChars: number = LIMITS.topLevelText,
): Message {
  for (const { blocks = [], text = '' } of tries) {
    const next: Message = {
      ...message,
      text: `${message.text}${text}`,
      blocks: [...message.blocks, ...blocks],
    };
    const textFits = text === '' || next.text.length <= textChars;
    if (textFits && (blocks.length === 0 || blocksWithinLimits(next.blocks))) return next;
  }
  return message;
}

/**
 * As many of `parts`, from the first, as fit joined by `separator` in `maxChars`, and how many did
 * not: a cut falls between two parts, never inside one (an amount stays whole).
 */
export function partsWithin(
  parts: readonly Mrkdwn[],
  separator: string,
  maxChars: number,
): { shown: Mrkdwn; omitted: number } {
  let chars = 0;
  let count = 0;
  for (const part of parts) {
    chars += part.text.length + (count === 0 ? 0 : separator.length);
    if (chars > maxChars) break;
    count += 1;
  }
  return { shown: join(parts.slice(0, count), separator), omitted: parts.length - count };
}
