/**
 * Whether `npm start` runs the local demo instead of the bot (README → Try it in one minute).
 * Kept apart from the demo itself, so the bot's own start loads none of it.
 */

/** Any one of these set means a Slack app is configured, so the start is the bot's, as always. */
export const SLACK_SETTINGS = [
  'SLACK_BOT_TOKEN',
  'SLACK_APP_TOKEN',
  'SLACK_CLIENT_ID',
  'SLACK_SIGNING_SECRET',
];

/** No Slack setting at all (empty counts as unset, as everywhere) and not production. */
export function wantsDemo(env: NodeJS.ProcessEnv): boolean {
  return env.NODE_ENV !== 'production' && SLACK_SETTINGS.every((name) => (env[name] ?? '').trim() === '');
}
