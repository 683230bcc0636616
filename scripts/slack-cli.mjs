#!/usr/bin/env node
// The Slack CLI's hooks (.slack/hooks.json), so `slack run` works with this repository:
//   get-manifest [file]  prints the app manifest (manifest.yml, or the file named) as JSON,
//                        the form the CLI reads; nothing else goes to stdout.
//   start                runs the bot in Socket Mode with the tokens the CLI hands over,
//                        building dist/ first when src/ changed.
// Protocol: https://github.com/slackapi/slack-cli/blob/main/.github/cli-sdk-specification.md
import { readFileSync } from 'node:fs';
import { buildIfStale } from './build.mjs';

const ROOT = new URL('..', import.meta.url);

async function getManifest(file = 'manifest.yml') {
  const { parse } = await import('yaml');
  const manifest = parse(readFileSync(new URL(file, ROOT), 'utf8'));
  process.stdout.write(`${JSON.stringify(manifest)}\n`);
}

async function start() {
  // The CLI sets SLACK_CLI_XOXB and SLACK_CLI_XAPP (and, in current versions, the usual names
  // too); they take precedence over .env, which dotenv never overrides.
  const fromCli = { SLACK_BOT_TOKEN: 'SLACK_CLI_XOXB', SLACK_APP_TOKEN: 'SLACK_CLI_XAPP' };
  for (const [name, cliName] of Object.entries(fromCli)) {
    const value = process.env[cliName];
    if (value) process.env[name] = value;
  }
  buildIfStale();
  await import(new URL('dist/main.js', ROOT).href);
}

const [hook, ...args] = process.argv.slice(2);
try {
  if (hook === 'get-manifest') await getManifest(...args);
  else if (hook === 'start') await start();
  else throw new Error(`unknown hook ${JSON.stringify(hook)}: expected get-manifest or start`);
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
