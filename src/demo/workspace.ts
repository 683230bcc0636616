/**
 * The demo's one workspace: one person (you), one private channel and the bot; what is in it
 * (the channel's messages, your App Home); and who is told when that changes. Both sides of the
 * demo's Slack (src/demo/slack.ts) read and change it: the Web API the bot calls, and the
 * requests Slack sends the bot.
 */

export const DEMO_TEAM = 'T0DEMO';
export const DEMO_USER = 'U0YOU';
export const DEMO_CHANNEL = 'C0PAYMENTS';
export const BOT_USER = 'U0BOT';
export const BOT_ID = 'B0BOT';
export const SLACKBOT = 'USLACKBOT';
export const APP_ID = 'A0DEMO';
export const HOME_VIEW_ID = 'V0HOME';

/** Display names, for rendering mentions. */
export const DEMO_NAMES = {
  users: { [DEMO_USER]: 'you', [BOT_USER]: 'Crypto Payments', [SLACKBOT]: 'Slackbot' },
  channels: { [DEMO_CHANNEL]: 'payments' },
} as const;

export interface DemoMessage {
  ts: string;
  /** The parent's ts, for a reply in a thread. */
  threadTs: string | undefined;
  user: string;
  text: string;
  blocks: unknown[];
  /** Shown only to you ("Only visible to you"), as responses are unless `in_channel`. */
  ephemeral: boolean;
  /** A slash command as you typed it: Slack keeps no message for it, the demo shows it to you. */
  command: boolean;
  edited: boolean;
  metadata: unknown;
  /** Cards the bot attached with `chat.unfurl`, per pasted link. */
  unfurls: { url: string; blocks: unknown[]; metadata?: unknown }[];
}

/** What the bot last presented in a Work Object's side panel: the invoice, or an error view (src/demo/entities.ts). */
export interface Flexpane {
  metadata?: Json | undefined;
  error?: Json | undefined;
}

/** Where a click comes from: a message's blocks, a card unfurled under it, or the App Home. */
export type ClickPlace = { kind: 'message' | 'unfurl'; ts: string } | { kind: 'home' };

/** What you typed or picked in one input of a modal, as the page sends it. */
export interface PageInput {
  type: string;
  value?: string | null;
  values?: string[];
}

/** The modal you see: the bot's view, its errors by block id, and what you typed in it so far. */
export interface DemoModal {
  view: Json;
  errors: Record<string, string>;
  typed: Record<string, PageInput>;
}

/** A JSON object, as the bot sends its arguments and replies. */
export type Json = Record<string, unknown>;
export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
export const str = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** A message as Slack shows it in a payload or in the history. */
export const asPayloadMessage = (m: DemoMessage) => ({
  type: 'message',
  ...(m.user === BOT_USER ? { bot_id: BOT_ID, user: BOT_USER } : { user: m.user }),
  text: m.text,
  blocks: m.blocks,
  ts: m.ts,
  ...(m.threadTs ? { thread_ts: m.threadTs } : {}),
});

export class Workspace {
  /** Messages in the channel, oldest first, thread replies included. */
  messages: DemoMessage[] = [];
  /** The blocks of your App Home, once the bot has published it. */
  home: unknown[] | undefined;
  /** The modal the bot opened for you (src/demo/modal.ts), until it is closed. */
  modal: DemoModal | undefined;
  /** The side panel of a Work Object you opened, as the bot last presented it (src/demo/entities.ts). */
  flexpane: Flexpane | undefined;
  readonly #listeners = new Set<() => void>();
  #lastTs = 0;

  /** Calls `listener` after every change anyone can see; returns what stops that. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Tells the listeners: called after every change anyone can see. */
  changed(): void {
    for (const listener of this.#listeners) listener();
  }

  find(ts: string | undefined): DemoMessage | undefined {
    return this.messages.find((m) => m.ts === ts);
  }

  /** Posts a message: unless told otherwise, a plain one in the channel, not in a thread. */
  add(message: Partial<DemoMessage> & Pick<DemoMessage, 'user' | 'text'>): DemoMessage {
    const full: DemoMessage = {
      ts: this.#nextTs(),
      threadTs: undefined,
      blocks: [],
      ephemeral: false,
      command: false,
      edited: false,
      metadata: undefined,
      unfurls: [],
      ...message,
    };
    this.messages.push(full);
    this.changed();
    return full;
  }

  /** A note from Slack itself, as Slackbot shows them: only to you. */
  notice(text: string, threadTs?: string): DemoMessage {
    return this.add({ user: SLACKBOT, text, ephemeral: true, threadTs });
  }

  /** Unique, increasing timestamps, as Slack's `ts` are. */
  #nextTs(): string {
    this.#lastTs = Math.max(this.#lastTs + 1, Date.now() * 1000);
    return `${Math.floor(this.#lastTs / 1_000_000)}.${String(this.#lastTs % 1_000_000).padStart(6, '0')}`;
  }
}
