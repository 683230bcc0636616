import { afterEach, describe, expect, it, vi } from 'vitest';
import { alive, type DemoRun, STARTING_BOT, startDemo, stopDemos, until } from '../support/demo-run.js';

/**
 * Stopping the local demo, in the test process (test/e2e/demo-stop.test.ts stops the built one
 * in a process of its own): the bot is stopped first, then the page, the demo's Slack and the
 * sandbox, the demo's folder is removed, and the demo says so and exits 0; a failure exits 1.
 */

afterEach(stopDemos, 30_000);

const RULE = '='.repeat(72);
const STOPPED = 'The local demo has stopped.';

const ready = (run: DemoRun) =>
  until(() => run.logs.some((line) => line.startsWith('The bot is ready')), 60_000);
const pageUrl = (run: DemoRun) => /Open (\S+) in your browser/.exec(run.logs.join('\n'))?.[1] ?? '';

/** Whether anything still answers at `url`. */
async function answers(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(5_000) });
    return true;
  } catch {
    return false;
  }
}

describe('stopping the local demo', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)(
    'on %s: stops the bot, closes everything, removes its folder, says so',
    async (signal) => {
      const run = await startDemo({ bot: STARTING_BOT });
      await ready(run);
      const bot = run.bot();
      const url = pageUrl(run);
      expect(await answers(url)).toBe(true);
      expect(run.leftovers()).toHaveLength(1);

      run.signal(signal);
      expect(await run.exit).toBe(0);
      expect(alive(bot?.pid ?? 0)).toBe(false);
      expect(run.logs.at(-1)).toBe(STOPPED);
      expect(run.leftovers()).toEqual([]);
      expect(run.errors).toEqual([]);
      for (const address of [url, bot?.env.SLACK_API_URL, bot?.env.PAYMENT_API_URL])
        expect(await answers(address ?? '')).toBe(false);
    },
  );

  it('a second signal while stopping stops nothing twice', async () => {
    const run = await startDemo({ bot: STARTING_BOT });
    await ready(run);
    run.signal('SIGINT');
    run.signal('SIGINT');
    run.signal('SIGTERM');
    expect(await run.exit).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(run.exits).toEqual([0]);
    expect(run.logs.filter((line) => line === STOPPED)).toHaveLength(1);
  });

  it('the bot failing as it is stopped is no news: still a clean stop', async () => {
    const run = await startDemo({ bot: `process.on('SIGTERM', () => process.exit(3));\n${STARTING_BOT}` });
    await ready(run);
    run.signal('SIGTERM');
    expect(await run.exit).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(run.exits).toEqual([0]);
    expect(run.errors.join('\n')).not.toContain('could not go on');
    expect(run.logs.at(-1)).toBe(STOPPED);
  });

  it('a bot that ignores SIGTERM is killed after 10 s', async () => {
    const run = await startDemo({ bot: `process.on('SIGTERM', () => undefined);\n${STARTING_BOT}` });
    await ready(run);
    const pid = run.bot()?.pid ?? 0;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      run.signal('SIGTERM');
      vi.advanceTimersByTime(10_000);
    } finally {
      vi.useRealTimers();
    }
    expect(await run.exit).toBe(0);
    expect(alive(pid)).toBe(false);
    expect(run.leftovers()).toEqual([]);
  });

  it('whatever ends the process, the bot is killed with it', async () => {
    const run = await startDemo({ bot: STARTING_BOT });
    await ready(run);
    const pid = run.bot()?.pid ?? 0;
    run.processExit();
    expect(await run.exit).toBe(1);
    expect(alive(pid)).toBe(false);
    expect(run.errors.join('\n')).toContain(
      'The local demo could not go on: the bot stopped (SIGKILL). Its last lines:\n{"level":"info","msg":"bot started"',
    );
    expect(run.logs).not.toContain(STOPPED);
    expect(run.leftovers()).toEqual([]);
  });

  it('the bot dying after it started ends the demo with 1', async () => {
    const run = await startDemo({ bot: `${STARTING_BOT}\nsetTimeout(() => process.exit(4), 1_000);` });
    await ready(run);
    expect(await run.exit).toBe(1);
    expect(run.errors.join('\n')).toContain('The local demo could not go on: the bot stopped (exit code 4).');
  });

  it('the bot stopping on its own after it started ends the demo with 0', async () => {
    const run = await startDemo({ bot: `${STARTING_BOT}\nsetTimeout(() => process.exit(0), 1_000);` });
    await ready(run);
    expect(await run.exit).toBe(0);
    expect(run.logs.at(-1)).toBe(STOPPED);
  });

  it('stopped while starting, before the bot: closes what runs, starts no bot', async () => {
    const run = await startDemo({
      bot: STARTING_BOT,
      onLog: (line, demo) => {
        if (line.startsWith(RULE)) demo.signal('SIGINT');
      },
    });
    expect(await run.exit).toBe(0);
    const url = pageUrl(run);
    // Time enough for a bot to have been started and to have said so.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(run.bot()).toBeUndefined();
    expect(run.exits).toEqual([0]);
    expect(run.logs.at(-1)).toBe(STOPPED);
    expect(run.errors).toEqual([]);
    expect(await answers(url)).toBe(false);
    expect(run.leftovers()).toEqual([]);
  });
});

describe('the real bot', () => {
  it('starts on the demo, answers /balance on the page, and stops with the demo', async () => {
    const run = await startDemo({ bot: 'real', reason: 'unconfigured' });
    await ready(run);
    const url = pageUrl(run);
    const said = await fetch(`${url}demo/say`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: '/balance' }),
    });
    expect(said.status).toBe(204);
    const feed = async () => ((await (await fetch(`${url}demo/state`)).json()) as { feed: string }).feed;
    await expect.poll(feed, { timeout: 20_000, interval: 100 }).toContain('Balance across all projects');
    expect(run.errors.filter((line) => /^bot (error|fatal)/.test(line))).toEqual([]);
    run.signal('SIGINT');
    expect(await run.exit).toBe(0);
    expect(run.leftovers()).toEqual([]);
    expect(run.logs.at(-1)).toBe(STOPPED);
  }, 90_000);
});
