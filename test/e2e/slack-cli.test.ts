import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { visibleText } from '../support/block-kit.js';
import { type SlackStandIn, startSlackStandIn } from '../support/slack-stand-in.js';
import { botEnv, HOME_TEAM, SECRETS, startBot } from './harness.js';

/**
 * `slack run` runs the hooks in .slack/hooks.json from the project's root. The CLI cannot be
 * installed here, so each hook's command is run the way the CLI runs it: same directory, its
 * stdout read as the answer, the tokens in SLACK_CLI_XOXB and SLACK_CLI_XAPP.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const hooks = (
  JSON.parse(readFileSync(join(ROOT, '.slack/hooks.json'), 'utf8')) as { hooks: Record<string, string> }
).hooks;

/** A hook's command as argv: `node` is the Node running the tests (22 or 24 in those CI runs). */
function argv(hook: string): [string, ...string[]] {
  const command = hooks[hook] ?? '';
  expect(command).toMatch(/^node [\w./ -]+$/);
  const [, ...args] = command.split(' ');
  return [process.execPath, ...args];
}

const manifestFile = (name: string) => parse(readFileSync(join(ROOT, name), 'utf8')) as unknown;

describe('get-manifest', () => {
  it('prints manifest.yml as JSON, and nothing else on stdout', () => {
    const [file, ...args] = argv('get-manifest');
    const run = spawnSync(file, args, { cwd: ROOT, encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(manifestFile('manifest.yml'));
  });

  it('prints the manifest named after it, for the Workflow Builder step', () => {
    const [file, ...args] = argv('get-manifest');
    const run = spawnSync(file, [...args, 'manifest.workflow.yml'], { cwd: ROOT, encoding: 'utf8' });
    expect(run.status).toBe(0);
    const manifest = JSON.parse(run.stdout) as { functions?: Record<string, unknown> };
    expect(manifest).toEqual(manifestFile('manifest.workflow.yml'));
    expect(Object.keys(manifest.functions ?? {})).toEqual(['get_invoice']);
  });

  it('exits 1 with a message naming a manifest that is not there', () => {
    const [file, ...args] = argv('get-manifest');
    const run = spawnSync(file, [...args, 'nope.yml'], { cwd: ROOT, encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('nope.yml');
  });
});

describe('start', () => {
  let sandbox: Sandbox;
  let slack: SlackStandIn;
  beforeAll(async () => {
    sandbox = await startSandbox();
    slack = await startSlackStandIn({
      teamId: HOME_TEAM,
      botToken: SECRETS.botToken,
      appToken: SECRETS.appToken,
    });
  });
  afterAll(async () => {
    await slack.close();
    await sandbox.close();
  });

  it('runs the bot in Socket Mode with the tokens the CLI hands over, and stops on SIGTERM', async () => {
    const {
      SLACK_BOT_TOKEN: _bot,
      SLACK_APP_TOKEN: _app,
      ...rest
    } = botEnv(sandbox, slack.apiUrl, {
      socketMode: true,
    });
    const bot = await startBot(
      {
        ...rest,
        SLACK_CLI_XOXB: SECRETS.botToken,
        SLACK_CLI_XAPP: SECRETS.appToken,
        DATABASE_URL: `file:${join(mkdtempSync(join(tmpdir(), 'slack-cli-')), 'bot.db')}`,
      },
      { command: argv('start'), cwd: ROOT },
    );
    await slack.socket.connected();
    const ack = await slack.socket.send('slash_commands', {
      team_id: HOME_TEAM,
      channel_id: 'C0SUPPORT',
      user_id: 'U0ASKER',
      command: '/balance',
      text: '',
      api_app_id: 'A0APP',
      response_url: slack.responseUrl(),
      trigger_id: '1.2.3',
    });
    expect(visibleText(ack.payload)).toContain('0.0123456 BTC');
    expect(await bot.stop('SIGTERM')).toMatchObject({ code: 0 });
    expect(bot.output.join('\n')).not.toContain(SECRETS.appToken);
  });
});
