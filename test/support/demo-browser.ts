import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { CHROMIUM_ARGS, ensureChromium } from './chromium.js';

/**
 * The local demo in a real browser, as test/e2e/demo-browser*.test.ts use it: `npm start` on a
 * fresh clone with nothing configured, started as `npm start` starts it after building
 * (`node dist/main.js`), in a scratch directory (no .env) with an empty environment, and
 * Debian's Chromium driven by playwright-core.
 */

export const MAIN = new URL('../../dist/main.js', import.meta.url).pathname;
/** The README's picture is refreshed with `DEMO_SCREENSHOT=docs/demo.png`; otherwise the shot stays out of the checkout. */
export const SCREENSHOT = process.env.DEMO_SCREENSHOT ?? join(tmpdir(), `demo-${process.pid}.png`);
/**
 * Beside it, when asked for: a digest with its chart, the App Home, a feed's Settings and an
 * invoice's side panel (docs/demo-digest.png, demo-home.png, demo-settings.png, demo-panel.png).
 */
export const shotBeside = (name: string) =>
  process.env.DEMO_SCREENSHOT
    ? join(dirname(process.env.DEMO_SCREENSHOT), `demo-${name}.png`)
    : join(tmpdir(), `demo-${name}-${process.pid}.png`);
/** The reader's time zone, far from the machine's UTC: dates must be shown in this one. */
export const READER_ZONE = 'Asia/Tokyo';

interface Demo {
  child: ChildProcess;
  output: string[];
  url: string;
}

/** Scratch working directories, removed at the end. */
const scratch: string[] = [];
export const scratchDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'demo-e2e-'));
  scratch.push(dir);
  return dir;
};

async function startDemo(env: Record<string, string>): Promise<Demo> {
  const child = spawn(process.execPath, [MAIN], {
    cwd: scratchDir(),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  if (child.stdout) createInterface({ input: child.stdout }).on('line', (line) => output.push(line));
  if (child.stderr) createInterface({ input: child.stderr }).on('line', (line) => output.push(line));
  const started = Date.now();
  while (!output.some((line) => line.startsWith('The bot is ready'))) {
    if (child.exitCode !== null) throw new Error(`the demo exited:\n${output.join('\n')}`);
    if (Date.now() - started > 60_000) throw new Error(`the demo did not start:\n${output.join('\n')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const url = /Open (http:\/\/\S+) in your browser/.exec(output.join('\n'))?.[1];
  if (!url) throw new Error(`no address in:\n${output.join('\n')}`);
  return { child, output, url };
}

export let demo: Demo;
let context: BrowserContext;
export let page: Page;
let profile = '';
/** Every address the page asked for. */
export const requested: string[] = [];

/** Starts the demo as `npm start` does and opens it in Chromium, for the file's tests; stops both after. */
export function useDemoBrowser(): void {
  beforeAll(async () => {
    const executablePath = ensureChromium();
    // npm_lifecycle_event is what `npm start` adds to the (otherwise empty) environment.
    demo = await startDemo({ PORT: '0', npm_lifecycle_event: 'start' });
    profile = mkdtempSync(join(tmpdir(), 'demo-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath,
      args: CHROMIUM_ARGS,
      timezoneId: READER_ZONE,
      locale: 'en-US',
      viewport: { width: 1360, height: 1000 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('request', (request) => requested.push(request.url()));
    await page.goto(demo.url);
    await page.locator('body:not(.starting)').waitFor({ timeout: 20_000 });
  }, 300_000);

  afterAll(async () => {
    await context?.close();
    if (demo && demo.child.exitCode === null) {
      demo.child.kill('SIGTERM');
      await once(demo.child, 'exit');
    }
    for (const dir of [profile, ...scratch]) if (dir) rmSync(dir, { recursive: true, force: true });
  });
}

/** Types into the message box and sends it, as a person does. */
export async function send(text: string): Promise<void> {
  await page.locator('#message').fill(text);
  await page.locator('#message').press('Enter');
}

/** The newest top-level message from the bot that shows `text`, as it is now (pinned by its ts). */
export async function botMessage(text: string, timeout = 10_000): Promise<Locator> {
  const newest = botMessages(text);
  await newest.waitFor({ timeout });
  return page.locator(`#feed > .msg[data-ts="${await newest.getAttribute('data-ts')}"]`);
}

const botMessages = (text: string): Locator =>
  page
    .locator('#feed > .msg', { has: page.locator('.msg-name', { hasText: 'Crypto Payments' }) })
    .filter({ hasText: text })
    .last();
