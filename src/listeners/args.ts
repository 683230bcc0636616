import type {
  AllMiddlewareArgs,
  BlockAction,
  ButtonAction,
  MessageShortcut,
  SlackActionMiddlewareArgs,
  SlackCommandMiddlewareArgs,
  SlackEventMiddlewareArgs,
  SlackShortcutMiddlewareArgs,
} from '@slack/bolt';
import type { StepArgs } from './functions/get-invoice.js';

/** What the router hands each kind of request's handler (Bolt's arguments). */
export type Listener<A> = (args: A) => Promise<void>;
export type CommandArgs = SlackCommandMiddlewareArgs & AllMiddlewareArgs;
export type ClickArgs = SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs;
export type ShortcutArgs = SlackShortcutMiddlewareArgs<MessageShortcut> & AllMiddlewareArgs;
export type EventArgs<T extends string> = SlackEventMiddlewareArgs<T> & AllMiddlewareArgs;
export type FunctionArgs = StepArgs & AllMiddlewareArgs;
