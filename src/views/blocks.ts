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
import type { ChartBlock } from './charts.js';
import { escapeText, httpUrl, type Mrkdwn, truncate } from './mrkdwn.js';

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

/** Top-level text: escaped and cut. */
/** A conservative count of a message's block text: its JSON, never less than Slack's count. */
export const blocksChars = (blocks: Message['blocks']): number => JSON.stringify(blocks).length;

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
