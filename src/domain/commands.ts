/**
 * The bot's slash commands: the one list the listeners, the not-connected answers, the errors'
 * texts, the manifest (scripts/manifest.ts) and the demo's Slack are all read from.
 */
export const COMMANDS = ['/balance', '/invoice'] as const;

export type Command = (typeof COMMANDS)[number];
