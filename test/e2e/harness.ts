import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Sandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/server.js';
import { commandBody, postToBot, type SlackPostResult } from '../support/slack-requests.js';
import { type SlackStandIn, startSlackStandIn } from '../support/slack-stand-in.js';

/** Secrets the bot is given in the end-to-end runs; none may ever appear in its output. */
export const SECRETS = {
  botToken: 'xoxb-e2e-1111-2222-secretbottoken',
  appToken: 'xapp-1-A0APP-3333-secretapptoken',
  signingSecret: 'e2e-signing-secret-0f9e8d7c6b5a',
};
export const HOME_TEAM = 'T0HOME';
const MAIN = new URL('../../dist/main.js', import.meta.url).pathname;

export interface BotProcess {
  readonly child: ChildProcess;
  /** Every line the bot wrote, stdout and stderr. */
  readonly output: string[];
  readonly logs: () => Record<string, unknown>[];
  readonly port: number;
  readonly url: string;
  /** Resolves with the exit code, once the process has exited. */
  readonly exited: Promise<number | null>;
  /** Sends a signal and resolves with the exit code and how long the exit took. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; ms: number }>;
}

export interface StartOptions {
  expectExit?: boolean;
  /** Another program that logs `bot started` with its port the same way (the benchmark's baseline). */
  script?: string;
  nodeArgs?: string[];
  /** Instead of node: a program and its arguments (`npm start`, a Slack CLI hook), run in `cwd`. */
  command?: readonly [string, ...string[]];
  cwd?: string;
}

/**
 * Starts the bot exactly as `npm start` does after building (`node dist/main.js`), in a scratch
 * directory (so no developer's .env is read), with only the given environment.
 */
export async function startBot(env: Record<string, string>, opts: StartOptions = {}): Promise<BotProcess> {
  const [file, ...args] = opts.command ?? [process.execPath, ...(opts.nodeArgs ?? []), opts.script ?? MAIN];
  const child = spawn(file, args, {
    cwd: opts.cwd ?? mkdtempSync(join(tmpdir(), 'bot-e2e-')),
    env: { PATH: process.env.PATH ?? '', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const collect = (stream: NodeJS.ReadableStream | null) => {
    let buffered = '';
    stream?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      output.push(...lines.filter(Boolean));
    });
  };
  collect(child.stdout);
  collect(child.stderr);
  const logs = () =>
    output.flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  // 'close', not 'exit': it comes after stdout and stderr have been read to the end.
  const exited = (once(child, 'close') as Promise<[number | null]>).then(([code]) => code);

  let port = 0;
  if (!opts.expectExit) {
    const started = Date.now();
    while (port === 0) {
      const line = logs().find((l) => l.msg === 'bot started');
      if (line) port = Number(line.port);
      else if (child.exitCode !== null) throw new Error(`the bot exited at start:\n${output.join('\n')}`);
      else if (Date.now() - started > 20_000) {
        child.kill('SIGKILL'); // not left running for whoever started it to find
        throw new Error(`the bot did not start:\n${output.join('\n')}`);
      } else await new Promise((r) => setTimeout(r, 20));
    }
  }
  return {
    child,
    output,
    logs,
    port,
    url: `http://127.0.0.1:${port}`,
    exited,
    async stop(signal = 'SIGTERM') {
      const started = performance.now();
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const code = await exited;
      return { code, ms: performance.now() - started };
    },
  };
}

/** What the bot needs to talk to this payment service and this Slack stand-in; HTTP mode unless `socketMode`. */
export function botEnv(
  sandbox: Pick<Sandbox, 'url' | 'apiKey' | 'payUrl'>,
  slackApiUrl: string,
  opts: { socketMode?: boolean | undefined } = {},
): Record<string, string> {
  return {
    SLACK_BOT_TOKEN: SECRETS.botToken,
    ...(opts.socketMode
      ? { SLACK_APP_TOKEN: SECRETS.appToken }
      : { SLACK_SIGNING_SECRET: SECRETS.signingSecret }),
    SLACK_API_URL: slackApiUrl,
    PAYMENT_API_URL: sandbox.url,
    PAYMENT_API_KEY: sandbox.apiKey,
    PAYMENT_PAY_URL: sandbox.payUrl,
  };
}

export interface Stack {
  sandbox: Sandbox;
  slack: SlackStandIn;
  /** The bot; a test that restarts it puts the new process here, so close() stops it. */
  bot: BotProcess;
  /** The environment the bot was started with. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** The line that ends the start's check of PAYMENT_API_KEY (src/installations/one.ts), whatever it found. */
const checkedKey = (line: Record<string, unknown>) =>
  line.msg === 'the payment service accepts PAYMENT_API_KEY' ||
  line.setting === 'PAYMENT_API_KEY' ||
  line.setting === 'PAYMENT_API_URL';

/** The sandbox service, the Slack stand-in and the bot, wired together. */
export async function startStack(
  opts: { env?: Record<string, string>; socketMode?: boolean; sandbox?: SandboxOptions } = {},
): Promise<Stack> {
  const sandbox = await startSandbox(opts.sandbox);
  const slack = await startSlackStandIn({
    teamId: HOME_TEAM,
    botToken: SECRETS.botToken,
    appToken: SECRETS.appToken,
  });
  const env: Record<string, string> = {
    ...botEnv(sandbox, slack.apiUrl, opts),
    PAYMENT_API_TIMEOUT_MS: '3000',
    LOG_LEVEL: 'debug',
    ...opts.env,
  };
  const bot = await startBot(env);
  // Once started, the bot reads the balance once to check PAYMENT_API_KEY: the tests start from
  // after that check, with no request recorded.
  await until(() => bot.logs().some(checkedKey), 'the start’s check of PAYMENT_API_KEY');
  sandbox.requests.splice(0);
  const stack: Stack = {
    sandbox,
    slack,
    bot,
    env,
    async close() {
      // The bot running now: a test that restarted it left the new process here.
      await stack.bot.stop();
      await slack.close();
      await sandbox.close();
    },
  };
  return stack;
}

/**
 * Sends the bot (HTTP mode) a request as Slack does, signed, with a fresh response_url; resolves
 * with the ack and the reply the person ends up seeing: in the ack, or posted to the response_url.
 */
export async function askBot(
  bot: Pick<BotProcess, 'url'>,
  slack: SlackStandIn,
  body: (responseUrl: string) => string,
  timeoutMs = 15_000,
): Promise<{ ack: SlackPostResult; reply: Record<string, unknown> }> {
  const responseUrl = slack.responseUrl();
  const ack = await postToBot(`${bot.url}/slack/events`, body(responseUrl), SECRETS.signingSecret);
  const reply = ack.body ? ack.json() : (await slack.waitForPost(responseUrl, timeoutMs)).body;
  return { ack, reply };
}

/** `/invoice watch <id>` from U0WATCHER in `channel`, as Slack sends it; resolves with what the person sees. */
export async function watchInvoice(
  bot: Pick<BotProcess, 'url'>,
  slack: SlackStandIn,
  invoiceId: string,
  channel = 'C0SUPPORT',
): Promise<Record<string, unknown>> {
  const body = (response_url: string) =>
    commandBody({
      command: '/invoice',
      text: `watch ${invoiceId}`,
      response_url,
      channel_id: channel,
      user_id: 'U0WATCHER',
    });
  return (await askBot(bot, slack, body)).reply;
}

/** kill -9: the bot ends at once and stops nothing (its leases, and its lock on a SQLite file, stay behind). */
export async function killBot(bot: BotProcess): Promise<void> {
  bot.child.kill('SIGKILL');
  await bot.exited;
}

/** Resolves once `check` holds, looking every 50 ms; fails naming `what` after `ms`. */
export async function until(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
