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

/**
 * Started by `npm start` (npm names the script it runs in `npm_lifecycle_event`), not in
 * production, and no Slack setting at all (empty counts as unset, as everywhere). A bare
 * `node dist/main.js`, the way a service or a container starts the bot, never runs the demo:
 * there, missing settings stop the start by name, as a lost secret should.
 */
export function wantsDemo(env: NodeJS.ProcessEnv): boolean {
  return (
    env.npm_lifecycle_event === 'start' &&
    env.NODE_ENV !== 'production' &&
    SLACK_SETTINGS.every((name) => (env[name] ?? '').trim() === '')
  );
}
