import { once } from 'node:events';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SLACK_SETTINGS } from '../../src/demo/wanted.js';
import { type DemoRun, STARTING_BOT, startDemo, stopDemos, until } from '../support/demo-run.js';

/**
 * The local demo as the person who ran `npm start` (or `npm run demo`) sees it in the terminal:
 * what it says first, the banner with the address to open, what a bad PORT or HOST gets, and how
 * the bot it starts is started. The bot here is a stand-in (test/support/demo-run.ts).
 */

afterEach(stopDemos, 30_000);

const RULE = '='.repeat(72);
const BOT_MAIN = resolve('src/main.ts');
/** A bot that never says it started. */
const SILENT_BOT = 'setInterval(() => undefined, 1_000_000);';

const ready = (run: DemoRun) => until(() => run.logs.some((line) => line.startsWith('The bot is ready')));
const banner = (run: DemoRun) => run.logs.find((line) => line.startsWith(RULE)) ?? '';
const bannerUrl = (run: DemoRun) => /Open (\S+) in your browser/.exec(banner(run))?.[1];

/** What the person reads when the demo gives up: its one line on stderr. */
async function failure(run: DemoRun): Promise<string> {
  expect(await run.exit).toBe(1);
  const said = run.errors.filter((line) => line.startsWith('The local demo could not go on: '));
  expect(said).toHaveLength(1);
  return said[0]?.slice('The local demo could not go on: '.length) ?? '';
}

describe('what the local demo says', () => {
  it('unconfigured: says first why this is the demo, then a banner naming the settings and the address', async () => {
    const run = await startDemo({ reason: 'unconfigured', bot: STARTING_BOT });
    await ready(run);
    expect(run.logs[0]).toBe(
      'No Slack settings found: starting the LOCAL DEMO (sandbox payment service + local Slack page + the bot)…',
    );
    const url = bannerUrl(run) ?? '';
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(run.logs[1]).toBe(`${RULE}
  No Slack settings found (${SLACK_SETTINGS.join(', ')}),
  so this is the LOCAL DEMO, not the bot on Slack.

  Open ${url} in your browser.

  The real bot answers a Slack stand-in there, on the sandbox payment service.
  Nothing reaches Slack or a real payment service. Ctrl-C stops it.
  To run it on Slack: README.md → Set up the Slack app.
${RULE}`);
    expect(run.logs[2]).toBe(`The bot is ready. Open ${url}`);
    expect(run.logs).toHaveLength(3);
    const page = await fetch(`${url}demo/state`);
    expect(((await page.json()) as { ready: boolean }).ready).toBe(true);
  });

  it('names the settings it was given but does not read, right after its first line', async () => {
    const env = {
      PATH: '/usr/bin:/bin',
      PORT: '0',
      PAYMENT_API_URL: 'https://api.pay.example',
      PAYMENT_API_KEY: 'k',
    };
    const run = await startDemo({ reason: 'unconfigured', bot: STARTING_BOT, env });
    await ready(run);
    expect(run.logs[1]).toBe(
      'The demo reads only PORT and HOST: it runs its own payment service and Slack, so it does not use PAYMENT_API_URL, PAYMENT_API_KEY.',
    );
    expect(run.logs.join('\n')).not.toContain('api.pay.example');
  });

  it('asked (npm run demo): says it was asked for, not that settings are missing', async () => {
    const run = await startDemo({ reason: 'asked', bot: STARTING_BOT });
    await ready(run);
    expect(run.logs[0]).toBe(
      'Starting the LOCAL DEMO (sandbox payment service + local Slack page + the bot)…',
    );
    const text = banner(run);
    expect(text.split('\n').slice(0, 4)).toEqual([
      RULE,
      '  This is the LOCAL DEMO (npm run demo), not the bot on Slack.',
      '',
      `  Open ${bannerUrl(run)} in your browser.`,
    ]);
    expect(text).not.toContain('No Slack settings found');
  });

  it('connects the page to the bot: what is said there reaches the bot at /slack/events', async () => {
    const run = await startDemo({ bot: STARTING_BOT });
    await ready(run);
    const said = await fetch(`${bannerUrl(run)}demo/say`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: '/balance' }),
    });
    expect(said.status).toBe(204);
    const { readFileSync, existsSync } = await import('node:fs');
    const requests = join(run.scratch, 'requests.txt');
    await until(() => existsSync(requests));
    expect(readFileSync(requests, 'utf8')).toBe('POST /slack/events\n');
    // A link to the sandbox's payment pages is the bot's to unfurl; another is not.
    for (const text of ['see http://example.test/x', `see ${run.bot()?.env.PAYMENT_PAY_URL}`]) {
      const posted = await fetch(`${bannerUrl(run)}demo/say`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text }),
      });
      expect(posted.status).toBe(204);
    }
    expect(readFileSync(requests, 'utf8')).toBe('POST /slack/events\nPOST /slack/events\n');
  });

  it('starts the bot from its entry point, in a folder of its own, with only the demo’s settings', async () => {
    const env = { PATH: '/usr/bin:/bin', HOME: '/home/someone', PORT: '0', SLACK_APP_TOKEN: 'not passed on' };
    const run = await startDemo({ bot: STARTING_BOT, env });
    await ready(run);
    const bot = run.bot();
    expect(bot?.argv[1]).toBe(BOT_MAIN);
    const [folder] = run.leftovers();
    expect(bot?.cwd).toBe(join(run.tmp, folder ?? ''));
    const { LC_CTYPE: _ignored, ...seen } = bot?.env ?? {};
    expect(seen).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/home/someone',
      SLACK_BOT_TOKEN: expect.stringMatching(/^xoxb-demo-/),
      SLACK_SIGNING_SECRET: expect.stringMatching(/^[0-9a-f]{32}$/),
      SLACK_API_URL: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/api\/$/),
      PAYMENT_API_URL: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+/),
      PAYMENT_API_KEY: expect.any(String),
      PAYMENT_PAY_URL: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+/),
      DATABASE_URL: `file:${join(bot?.cwd ?? '', 'bot.sqlite')}`,
      PORT: '0',
      HOST: '127.0.0.1',
      WATCH_POLL_SECONDS: '2',
      BALANCE_POLL_SECONDS: '3',
      LOG_LEVEL: 'info',
    });
  });

  it('passes no HOME when there is none, and an empty PATH when there is none', async () => {
    const run = await startDemo({ bot: STARTING_BOT, env: { PORT: '0' } });
    await ready(run);
    const env = run.bot()?.env ?? {};
    expect(env.PATH).toBe('');
    expect(Object.keys(env)).not.toContain('HOME');
  });
});

describe('PORT and HOST', () => {
  it.each(['abc', 'x1', '1x', '-1', '3.5', '65536', '99999'])(
    'refuses PORT=%s by name, starting no bot',
    async (port) => {
      const run = await startDemo({ bot: STARTING_BOT, env: { PORT: port } });
      expect(await failure(run)).toBe('PORT must be a port number from 0 to 65535');
      expect(run.bot()).toBeUndefined();
      expect(run.logs.join('\n')).not.toContain('Open http');
      // The exit listener finds no bot to kill, and says nothing of it.
      expect(() => run.processExit()).not.toThrow();
      expect(run.leftovers()).toEqual([]);
    },
  );

  it('takes PORT with spaces around it, and leading zeros', async () => {
    const run = await startDemo({ bot: STARTING_BOT, env: { PORT: ' 00 ' } });
    await ready(run);
    expect(bannerUrl(run)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(bannerUrl(run)).not.toBe('http://127.0.0.1:3000/');
  });

  it.each([
    ['unset', undefined, 3000],
    ['blank', '  ', 3000],
    ['the highest', '65535', 65535],
  ])('PORT %s: that port, or says that it is taken', async (_label, port, expected) => {
    const run = await startDemo({ bot: 'process.exit(0);', env: port === undefined ? {} : { PORT: port } });
    expect(await run.exit).toBeTypeOf('number');
    const said = [...run.logs, ...run.errors].join('\n');
    if (said.includes('already in use')) {
      expect(said).toContain(`port ${expected} is already in use`);
    } else {
      expect(bannerUrl(run)).toBe(`http://127.0.0.1:${expected}/`);
    }
    expect(said).not.toContain('PORT must be');
  });

  it('a port already taken: says which, and how to pick another', async () => {
    const taken = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const { port } = taken.address() as { port: number };
    try {
      const run = await startDemo({ bot: STARTING_BOT, env: { PORT: String(port) } });
      expect(await failure(run)).toBe(
        `port ${port} is already in use: start with PORT set to another one, e.g. PORT=3001`,
      );
      expect(run.bot()).toBeUndefined();
    } finally {
      taken.close();
    }
  });

  it('another failure to listen is shown as it is', async () => {
    // TEST-NET-1: an address no interface of this machine has.
    const run = await startDemo({ bot: STARTING_BOT, env: { PORT: '0', HOST: '192.0.2.1' } });
    const said = await failure(run);
    expect(said).toContain('EADDRNOTAVAIL');
    expect(said).not.toContain('already in use');
  });

  it('HOST, trimmed, is where the page listens and the address shown', async () => {
    const run = await startDemo({ bot: STARTING_BOT, env: { PORT: '0', HOST: ' localhost ' } });
    await ready(run);
    expect(bannerUrl(run)).toMatch(/^http:\/\/localhost:\d+\/$/);
  });

  it('a blank HOST is loopback', async () => {
    const run = await startDemo({ bot: STARTING_BOT, env: { PORT: '0', HOST: ' ' } });
    await ready(run);
    expect(bannerUrl(run)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
  });
});

describe('a bot that does not start', () => {
  it('exits on its own: the demo shows its last 30 lines', async () => {
    const lines = Array.from({ length: 35 }, (_, i) => `line ${i + 1}`);
    const bot = `${lines.map((line) => `console.log(${JSON.stringify(line)});`).join('\n')}
setTimeout(() => process.exit(3), 300);`;
    const run = await startDemo({ bot });
    const said = await failure(run);
    const kept = said.split('\n').slice(1);
    expect(said.split('\n')[0]).toBe('the bot stopped (exit code 3). Its last lines:');
    expect(kept).toEqual(lines.slice(5));
    expect(run.leftovers()).toEqual([]);
    expect(run.logs).not.toContain('The local demo has stopped.');
  });

  it('shows its warnings and errors as they come, and keeps every line of stdout and stderr', async () => {
    const entries = [
      { level: 'info', msg: 'routine' },
      { level: 'warn', msg: 'careful' },
      { level: 'error', msg: 'broken' },
      { level: 'fatal', msg: 'gone' },
      { level: 'debug', msg: 'detail' },
      { msg: 'bot started', port: '4000' },
      { msg: 'listening', port: 4000 },
    ].map((entry) => JSON.stringify(entry));
    const bot = `${entries.map((line) => `console.log(${JSON.stringify(line)});`).join('\n')}
console.error('not json');
setTimeout(() => process.exit(2), 300);`;
    const run = await startDemo({ bot });
    const [first, ...kept] = (await failure(run)).split('\n');
    expect(first).toBe('the bot stopped (exit code 2). Its last lines:');
    // stdout and stderr are read apart: their lines may interleave either way.
    expect(kept.filter((line) => line !== 'not json')).toEqual(entries);
    expect(kept).toHaveLength(entries.length + 1);
    expect(run.errors.filter((line) => line.startsWith('bot '))).toEqual([
      'bot warn: careful',
      'bot error: broken',
      'bot fatal: gone',
    ]);
    expect(run.logs.join('\n')).not.toContain('The bot is ready');
  });

  it('killed: names the signal', async () => {
    const run = await startDemo({ bot: "console.log('dying');\nprocess.kill(process.pid, 'SIGKILL');" });
    expect(await failure(run)).toBe('the bot stopped (SIGKILL). Its last lines:\ndying');
  });

  it.each(['SIGINT', 'SIGTERM'])(
    'stopped by %s before it started: the demo stops too, quietly',
    async (signal) => {
      const run = await startDemo({ bot: `process.kill(process.pid, '${signal}');\n${SILENT_BOT}` });
      expect(await run.exit).toBe(0);
      expect(run.logs.at(-1)).toBe('The local demo has stopped.');
      expect(run.logs.join('\n')).not.toContain('The bot is ready');
      expect(run.errors).toEqual([]);
    },
  );

  it('exits cleanly before it started: the demo stops too, not ready', async () => {
    const run = await startDemo({ bot: 'process.exit(0);' });
    expect(await run.exit).toBe(0);
    expect(run.logs.join('\n')).not.toContain('The bot is ready');
    expect(run.logs.at(-1)).toBe('The local demo has stopped.');
    expect(run.leftovers()).toEqual([]);
  });

  it('says nothing within 30 s: the demo gives up, showing what it said', async () => {
    const run = await startDemo({
      bot: SILENT_BOT,
      onLog: (line) => {
        if (!line.startsWith(RULE)) return;
        // From the banner on, until the bot has been started: its deadline runs on a fake clock.
        vi.useFakeTimers({ toFake: ['setTimeout'] });
        setImmediate(() => {
          try {
            vi.advanceTimersByTime(29_000);
            expect(run.exits).toEqual([]);
            vi.advanceTimersByTime(1_000);
          } finally {
            vi.useRealTimers();
          }
        });
      },
    });
    expect(await failure(run)).toBe('the bot did not start within 30 s:\n');
    expect(run.leftovers()).toEqual([]);
  });
});
