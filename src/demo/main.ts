import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { SETTING_NAMES, settingOf } from '../config/settings.js';
import { unreadSettings } from '../config.js';
import { type Sandbox, startSandbox } from '../sandbox/server.js';
import { BotPauses } from './bot-pauses.js';
import { digestNow } from './digest-now.js';
import { seedSampleHistory, withStoreFile } from './sample-history.js';
import { type PageServer, startPageServer } from './server.js';
import { type DemoSlack, startDemoSlack } from './slack.js';
import { SLACK_SETTINGS } from './wanted.js';

/**
 * The local demo (README → Try it in one minute): the sandbox payment service, a Slack stand-in
 * with a page that looks like a channel, and the real bot in HTTP mode as a child process
 * (`dist/main.js`, the same code path as in production: signed requests, the real listeners and
 * store). Everything listens on loopback unless HOST says otherwise; nothing reaches Slack or a
 * real payment service. `npm start` runs it when no Slack setting is found; `npm run demo` always.
 */

const DEFAULT_PORT = 3000;
const DEFAULT_HOST = '127.0.0.1';
/** How long the bot may take to start before the demo gives up. */
const BOT_START_MS = 30_000;
/** How long the bot may take to stop before it is killed. */
const BOT_STOP_MS = 10_000;
/** Lines of the bot's output kept, to show when it fails. */
const KEPT_LINES = 30;

/** The bot's entry point beside this folder: `dist/main.js`, or `src/main.ts` under tsx. */
const here = fileURLToPath(import.meta.url);
const BOT_MAIN = join(dirname(here), '..', here.endsWith('.ts') ? 'main.ts' : 'main.js');

type DemoReason = 'unconfigured' | 'asked';

class DemoError extends Error {}

function pagePort(raw: string | undefined): number {
  const value = raw?.trim() ?? '';
  if (value === '') return DEFAULT_PORT;
  if (!/^\d+$/.test(value) || Number(value) > 65535)
    throw new DemoError('PORT must be a port number from 0 to 65535');
  return Number(value);
}

function banner(url: string, reason: DemoReason): string {
  const why =
    reason === 'unconfigured'
      ? `No Slack settings found (${SLACK_SETTINGS.join(', ')}),\n  so this is the LOCAL DEMO, not the bot on Slack.`
      : 'This is the LOCAL DEMO (npm run demo), not the bot on Slack.';
  const rule = '='.repeat(72);
  return `${rule}
  ${why}

  Open ${url} in your browser.

  The real bot answers a Slack stand-in there, on the sandbox payment service.
  Nothing reaches Slack or a real payment service. Ctrl-C stops it.
  To run it on Slack: README.md → Set up the Slack app.
${rule}`;
}

/** The bot's SQLite file in the demo's folder. */
const storeFile = (dir: string) => join(dir, 'bot.sqlite');

/** Starts the bot on the demo's Slack and sandbox; resolves with the port it listens on. */
function startBot(
  slack: DemoSlack,
  sandbox: Sandbox,
  dir: string,
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; port: Promise<number>; output: string[] } {
  // A scratch working directory: the bot reads no .env of the person's, only these settings.
  const child = spawn(process.execPath, [...process.execArgv, BOT_MAIN], {
    cwd: dir,
    env: {
      PATH: env.PATH ?? '',
      ...(env.HOME ? { HOME: env.HOME } : {}),
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_SIGNING_SECRET: slack.signingSecret,
      SLACK_API_URL: slack.apiUrl,
      PAYMENT_API_URL: sandbox.url,
      PAYMENT_API_KEY: sandbox.apiKey,
      PAYMENT_PAY_URL: sandbox.payUrl,
      DATABASE_URL: `file:${storeFile(dir)}`,
      PORT: '0',
      HOST: '127.0.0.1',
      // Watches and the payments feed react within seconds of a change in the side panel.
      WATCH_POLL_SECONDS: '2',
      BALANCE_POLL_SECONDS: '3',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  let started: (port: number) => void = () => undefined;
  const port = new Promise<number>((resolve) => {
    started = resolve;
  });
  const read = (line: string) => {
    output.push(line);
    if (output.length > KEPT_LINES) output.shift();
    let entry: { msg?: unknown; level?: unknown; port?: unknown };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      return;
    }
    if (entry.msg === 'bot started' && typeof entry.port === 'number') started(entry.port);
    // The bot's warnings and errors are worth seeing; its routine lines are not.
    else if (entry.level === 'warn' || entry.level === 'error' || entry.level === 'fatal')
      console.error(`bot ${entry.level}: ${String(entry.msg)}`);
  };
  if (child.stdout) createInterface({ input: child.stdout }).on('line', read);
  if (child.stderr) createInterface({ input: child.stderr }).on('line', read);
  return { child, port, output };
}

/** What the demo has started so far, each stopped at the end. */
interface Started {
  sandbox?: Sandbox;
  slack?: DemoSlack;
  page?: PageServer;
  bot?: ChildProcess;
}

/** Starts the sandbox, the demo's Slack and the page, each in `started` as soon as it runs. */
async function startServices(
  started: Started,
  reason: DemoReason,
  env: NodeJS.ProcessEnv,
  digest: () => Promise<string | undefined>,
): Promise<{ sandbox: Sandbox; slack: DemoSlack; page: PageServer }> {
  const port = pagePort(env.PORT);
  const host = env.HOST?.trim() || DEFAULT_HOST;
  const sandbox = await startSandbox({ host: '127.0.0.1' });
  started.sandbox = sandbox;
  const slack = await startDemoSlack({ unfurlHosts: [new URL(sandbox.payUrl).host] });
  started.slack = slack;
  const page = await startPageServer({ host, port, slack, sandbox, digestNow: digest }).catch(
    (error: unknown) => {
      const code = (error as { code?: string }).code;
      throw code === 'EADDRINUSE'
        ? new DemoError(`port ${port} is already in use: start with PORT set to another one, e.g. PORT=3001`)
        : error;
    },
  );
  started.page = page;
  console.log(banner(page.url, reason));
  return { sandbox, slack, page };
}

/**
 * Settles when the bot exits: resolves when it was stopped (a clean exit, or SIGINT or SIGTERM:
 * Ctrl-C reaches it too), rejects with its last lines when it failed.
 */
function botExit({ child, output }: ReturnType<typeof startBot>): Promise<void> {
  const ended = new Promise<void>((resolve, reject) => {
    child.once('exit', (code, signal) => {
      if (code === 0 || signal === 'SIGINT' || signal === 'SIGTERM') return resolve();
      reject(
        new DemoError(
          `the bot stopped (${signal ?? `exit code ${code}`}). Its last lines:\n${output.join('\n')}`,
        ),
      );
    });
  });
  // Handled where it is awaited; a failure while the demo is stopping anyway is no news.
  ended.catch(() => undefined);
  return ended;
}

/** Rejects when the bot has not started within BOT_START_MS. */
function startDeadline({ output }: ReturnType<typeof startBot>): Promise<never> {
  return new Promise<never>((_resolve, reject) => {
    setTimeout(
      () =>
        reject(new DemoError(`the bot did not start within ${BOT_START_MS / 1000} s:\n${output.join('\n')}`)),
      BOT_START_MS,
    ).unref();
  });
}

/** Stops the bot: SIGTERM, then SIGKILL after BOT_STOP_MS; resolves once it has exited. */
async function stopBot(bot: ChildProcess | undefined): Promise<void> {
  if (!bot || bot.exitCode !== null || bot.signalCode !== null) return;
  const exited = new Promise((resolve) => bot.once('exit', resolve));
  bot.kill('SIGTERM');
  const timer = setTimeout(() => bot.kill('SIGKILL'), BOT_STOP_MS);
  await exited;
  clearTimeout(timer);
}

interface BotRun {
  slack: DemoSlack;
  sandbox: Sandbox;
  dir: string;
  env: NodeJS.ProcessEnv;
  started: Started;
  pauses: BotPauses;
  stopping: () => boolean;
}

/**
 * Runs the bot until it stops or fails (rejects with its last lines), and again each time it was
 * stopped for work in its store (src/demo/bot-pauses.ts), once that work is done.
 */
async function runBot(run: BotRun, ready: () => void): Promise<void> {
  const { slack, started, pauses } = run;
  for (let first = true; !run.stopping(); first = false) {
    const bot = startBot(slack, run.sandbox, run.dir, run.env);
    started.bot = bot.child;
    const ended = botExit(bot);
    const botPort = await Promise.race([bot.port, ended.then(() => undefined), startDeadline(bot)]);
    if (botPort === undefined) return;
    slack.connect(`http://127.0.0.1:${botPort}/slack/events`);
    if (first) ready();
    pauses.resumed();
    // Asked for while this bot was starting: it is stopped again for it.
    if (pauses.asked) void stopBot(bot.child);
    // From here on, the bot stopping or failing ends the demo, unless it was stopped for work.
    await ended;
    if (run.stopping() || !pauses.asked) return;
    await pauses.runBetween();
  }
}

/**
 * Runs the demo until SIGINT or SIGTERM (or until the bot stops or fails), then stops its
 * children, removes its folder and exits the process: it never returns.
 */
export async function runDemo(reason: DemoReason, env: NodeJS.ProcessEnv = process.env): Promise<never> {
  console.log(
    reason === 'unconfigured'
      ? 'No Slack settings found: starting the LOCAL DEMO (sandbox payment service + local Slack page + the bot)…'
      : 'Starting the LOCAL DEMO (sandbox payment service + local Slack page + the bot)…',
  );
  const unread = unreadSettings(env, 'demo').unread.map((u) => u.setting);
  if (unread.length > 0) {
    const read = SETTING_NAMES.filter((name) => settingOf(name).reads.includes('demo'));
    console.log(
      `The demo reads only ${read.join(' and ')}: it runs its own payment service and Slack, so it does not use ${unread.join(', ')}.`,
    );
  }
  const dir = mkdtempSync(join(tmpdir(), 'payments-bot-demo-'));
  const started: Started = {};
  let stopping = false;
  const pauses = new BotPauses(() => stopBot(started.bot));

  async function stop(code: number): Promise<never> {
    if (!stopping) {
      stopping = true;
      pauses.abandon(new DemoError('the demo stopped'));
      await stopBot(started.bot);
      await Promise.allSettled([started.page?.close(), started.slack?.close(), started.sandbox?.close()]);
      rmSync(dir, { recursive: true, force: true });
      if (code === 0) console.log('The local demo has stopped.');
      process.exit(code);
    }
    return new Promise<never>(() => undefined);
  }
  // Every SIGINT and SIGTERM, not only the first: Ctrl-C signals the whole process group, and
  // `npm start` passes on the SIGINT it gets too, so two arrive at once. A signal with no
  // listener left (after `once`) would end the process there, before the folder is removed.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void stop(0));
  // Whatever ends this process, the bot does not outlive it.
  process.once('exit', () => {
    if (started.bot?.exitCode === null) started.bot.kill('SIGKILL');
  });

  try {
    const { sandbox, slack, page } = await startServices(
      started,
      reason,
      env,
      digestNow(pauses, storeFile(dir)),
    );
    // Stopped while starting: no bot is started after the stop has looked for one.
    if (stopping) return stop(0);
    const today = Object.fromEntries(
      sandbox.balances.map((b) => [b.id, { title: b.title, balance: b.balance.toString() }]),
    );
    await withStoreFile(storeFile(dir), (store) => seedSampleHistory(store, today, Date.now()));
    await runBot({ slack, sandbox, dir, env, started, pauses, stopping: () => stopping }, () =>
      console.log(`The bot is ready. Open ${page.url}`),
    );
  } catch (error) {
    if (!stopping) {
      console.error(
        `The local demo could not go on: ${error instanceof Error ? error.message : String(error)}`,
      );
      return stop(1);
    }
  }
  return stop(0);
}

// `npm run demo`: the demo whatever is configured.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await runDemo('asked');
