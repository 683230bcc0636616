import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { vi } from 'vitest';

/**
 * Runs the local demo (`runDemo`) inside the test process: console and process.exit are spied on,
 * the demo's signal and exit listeners are taken back at the end, and its bot is either the real
 * one (src/main.ts under tsx) or a stand-in: a module node loads with `--import` before the bot's
 * entry point, which records how it was started and then behaves as the test says, never letting
 * the real entry point run.
 */

/** How the demo started its bot, as the stand-in saw it. */
export interface BotRecord {
  pid: number;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
}

export interface DemoRun {
  logs: string[];
  errors: string[];
  /** Resolves with the code the demo passed to process.exit. */
  exit: Promise<number>;
  exits: number[];
  /** Calls the demo's own SIGINT or SIGTERM listener, as the signal would. */
  signal(name: 'SIGINT' | 'SIGTERM'): void;
  /** Calls the demo's listener for the process's 'exit' event. */
  processExit(): void;
  /** The stand-in bot's record, once it has started. */
  bot(): BotRecord | undefined;
  /** Where the stand-in writes what it wants the test to know (requests it got). */
  scratch: string;
  /** The TMPDIR the demo made its folder in. */
  tmp: string;
  /** The demo's folders in `tmp`. */
  leftovers(): string[];
}

export interface DemoOptions {
  reason?: 'unconfigured' | 'asked';
  env?: NodeJS.ProcessEnv;
  /** Module code run as the stand-in bot after it has recorded itself; `real` runs the real bot. */
  bot: string | 'real';
  /** Called with each line the demo logs, as it logs it. */
  onLog?: (line: string, run: DemoRun) => void;
}

interface Active {
  run: DemoRun;
  listeners: { event: string; listener: (...args: unknown[]) => void }[];
  exited: boolean;
}

const active: Active[] = [];
let savedExecArgv: string[] | undefined;

/** The stand-in's prelude: records itself (RECORD), leaves a file in its working folder. */
function standIn(record: string, body: string): string {
  return `import { writeFileSync, appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
writeFileSync(${JSON.stringify(record)}, JSON.stringify({ pid: process.pid, argv: process.argv, cwd: process.cwd(), env: process.env }));
writeFileSync('bot.sqlite', 'stand-in');
const SCRATCH = ${JSON.stringify(join(record, '..'))};
void appendFileSync; void createServer; void SCRATCH;
${body}
await new Promise(() => undefined);
`;
}

/** The stand-in body of a bot that starts: listens, says so, records the requests it gets. */
export const STARTING_BOT = `
const server = createServer((req, res) => {
  appendFileSync(SCRATCH + '/requests.txt', req.method + ' ' + req.url + '\\n');
  res.writeHead(200).end();
});
server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ level: 'info', msg: 'bot started', port: server.address().port }));
});
`;

export async function startDemo(options: DemoOptions): Promise<DemoRun> {
  const scratch = mkdtempSync(join(tmpdir(), 'demo-unit-'));
  const tmp = join(scratch, 'tmp');
  mkdirSync(tmp);
  const record = join(scratch, 'bot.json');
  savedExecArgv ??= process.execArgv;
  if (options.bot === 'real') {
    process.execArgv = ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href];
  } else {
    const preload = join(scratch, 'stand-in.mjs');
    writeFileSync(preload, standIn(record, options.bot));
    process.execArgv = ['--import', preload];
  }

  const logs: string[] = [];
  const errors: string[] = [];
  const exits: number[] = [];
  let exited: (code: number) => void = () => undefined;
  const exit = new Promise<number>((resolve) => {
    exited = resolve;
  });
  const entry: Active = { run: undefined as unknown as DemoRun, listeners: [], exited: false };
  const own = (event: string) => entry.listeners.filter((l) => l.event === event).map((l) => l.listener);
  const run: DemoRun = {
    logs,
    errors,
    exit,
    exits,
    scratch,
    tmp,
    signal: (name) => {
      for (const listener of own(name)) listener(name);
    },
    processExit: () => {
      for (const listener of own('exit')) listener(0);
    },
    bot: () => (existsSync(record) ? (JSON.parse(readFileSync(record, 'utf8')) as BotRecord) : undefined),
    leftovers: () => readdirSync(tmp).filter((name) => name.startsWith('payments-bot-demo-')),
  };
  entry.run = run;
  active.push(entry);

  vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
    const line = args.map(String).join(' ');
    logs.push(line);
    options.onLog?.(line, run);
  });
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
    errors.push(args.map(String).join(' '));
  });
  vi.spyOn(process, 'exit').mockImplementation(((code?: number) => {
    exits.push(code ?? 0);
    entry.exited = true;
    exited(code ?? 0);
    return undefined as never;
  }) as typeof process.exit);

  const events = ['SIGINT', 'SIGTERM', 'exit'] as const;
  const listeners = (event: (typeof events)[number]) =>
    process.listeners(event as NodeJS.Signals) as unknown[];
  const before = new Map(events.map((event) => [event, listeners(event)]));
  const { runDemo } = await import('../../src/demo/main.js');
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
  try {
    void runDemo(options.reason ?? 'asked', options.env ?? { PATH: process.env.PATH, PORT: '0' });
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
  for (const event of events) {
    for (const listener of listeners(event)) {
      if (!before.get(event)?.includes(listener))
        entry.listeners.push({ event, listener: listener as (...args: unknown[]) => void });
    }
  }
  return run;
}

/** Whether a process is still there. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits until `test` holds, looking every 20 ms, for up to `ms`. */
export async function until(test: () => boolean, ms = 20_000): Promise<void> {
  const started = Date.now();
  while (!test()) {
    if (Date.now() - started > ms) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Stops every demo still running, kills their bots, takes back listeners and spies. */
export async function stopDemos(): Promise<void> {
  for (const { run, listeners, exited } of active.splice(0)) {
    if (!exited) {
      run.signal('SIGTERM');
      await Promise.race([run.exit, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    }
    const pid = run.bot()?.pid;
    if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
    for (const { event, listener } of listeners) process.removeListener(event, listener);
    rmSync(run.scratch, { recursive: true, force: true });
  }
  if (savedExecArgv) process.execArgv = savedExecArgv;
  savedExecArgv = undefined;
  vi.restoreAllMocks();
}
