import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { visibleText } from '../support/block-kit.js';
import { commandBody } from '../support/slack-requests.js';
import { type SlackStandIn, startSlackStandIn } from '../support/slack-stand-in.js';
import { askBot, botEnv, HOME_TEAM, SECRETS, startBot } from './harness.js';

/**
 * The README's production path on a fresh copy of the repository (its files as git knows
 * them, nothing built, no node_modules): `npm ci`, `npm run build`, `npm prune --omit=dev`,
 * then start with the dev tools gone.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let dir = '';
let sandbox: Sandbox;
let slack: SlackStandIn;

function npm(...args: string[]): string {
  return execFileSync('npm', [...args, '--no-audit', '--no-fund'], {
    cwd: dir,
    encoding: 'utf8',
    stdio: 'pipe',
  });
}

/** The process's resident memory, as /metrics reports it (a figure printed, not asserted). */
async function residentMiB(url: string): Promise<number> {
  const metrics = await (await fetch(`${url}/metrics`)).text();
  return Math.round(Number(/^slackbot_process_resident_memory_bytes (\d+)/m.exec(metrics)?.[1]) / 2 ** 20);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bot-production-'));
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((file) => file && existsSync(join(ROOT, file)));
  for (const file of files) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(join(ROOT, file), join(dir, file));
  }
  // The packages come from npm's cache, which the install of this checkout just filled.
  npm('ci', '--prefer-offline');
  npm('run', 'build');
  npm('prune', '--omit=dev');
  sandbox = await startSandbox();
  slack = await startSlackStandIn({ teamId: HOME_TEAM, botToken: SECRETS.botToken });
}, 300_000);

afterAll(async () => {
  await slack?.close();
  await sandbox?.close();
});

describe('production path', () => {
  it('leaves no dev tool installed', () => {
    for (const tool of ['typescript', 'tsx', 'vitest', '@biomejs/biome', '@stryker-mutator/core']) {
      expect(existsSync(join(dir, 'node_modules', tool)), tool).toBe(false);
    }
    expect(existsSync(join(dir, 'dist/main.js'))).toBe(true);
  });

  it('npm start runs the built bot without compiling: /healthz 200, /invoice answered, SIGTERM exits 0', async () => {
    const bot = await startBot(
      { ...botEnv(sandbox, slack.apiUrl), DATABASE_URL: `file:${join(dir, 'bot.db')}` },
      { command: ['npm', 'start'], cwd: dir },
    );
    expect((await fetch(`${bot.url}/healthz`)).status).toBe(200);
    const idle = await residentMiB(bot.url);

    const { ack, reply } = await askBot(bot, slack, (response_url) =>
      commandBody({ command: '/invoice', text: DEMO_INVOICE_IDS.open, response_url }),
    );
    expect(ack.status).toBe(200);
    expect(visibleText(reply)).toContain('Order #1042');

    console.log(
      `production start: ${idle} MiB resident when idle, ${await residentMiB(bot.url)} MiB after one /invoice`,
    );

    expect(await bot.stop('SIGTERM')).toMatchObject({ code: 0 });
    expect(bot.output.join('\n')).not.toContain('Building dist/');
  });

  it('npm start without a build says how to build, instead of failing on a missing tsc', async () => {
    renameSync(join(dir, 'dist'), join(dir, 'dist.moved'));
    try {
      const bot = await startBot(botEnv(sandbox, slack.apiUrl), {
        command: ['npm', 'start'],
        cwd: dir,
        expectExit: true,
      });
      expect(await bot.exited).not.toBe(0);
      const output = bot.output.join('\n');
      expect(output).toContain('TypeScript is not installed');
      expect(output).toContain('npm ci && npm run build && npm prune --omit=dev && node dist/main.js');
    } finally {
      renameSync(join(dir, 'dist.moved'), join(dir, 'dist'));
    }
  });
});
