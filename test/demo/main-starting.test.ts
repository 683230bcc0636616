import * as childProcess from 'node:child_process';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { STARTING_BOT, startDemo, stopDemos } from '../support/demo-run.js';

/**
 * Ctrl-C while the demo is still starting its services: the stop has already looked for a bot
 * (there was none), so no bot may be started after it. Whether one was is seen on spawn itself:
 * a bot started then would find its folder removed and die before it could say anything.
 */

vi.mock('node:child_process', async (actual) => {
  const real = await actual<typeof childProcess>();
  return { ...real, spawn: vi.fn(real.spawn) };
});

afterEach(stopDemos, 30_000);

const RULE = '='.repeat(72);

describe('stopped while starting', () => {
  it('starts no bot once the stop has begun', async () => {
    vi.mocked(childProcess.spawn).mockClear();
    const run = await startDemo({
      bot: STARTING_BOT,
      onLog: (line, demo) => {
        if (line.startsWith(RULE)) demo.signal('SIGINT');
      },
    });
    expect(await run.exit).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(vi.mocked(childProcess.spawn)).not.toHaveBeenCalled();
    expect(run.exits).toEqual([0]);
  });

  it('a demo not stopped starts its bot (so the spawn above is seen)', async () => {
    vi.mocked(childProcess.spawn).mockClear();
    const run = await startDemo({ bot: STARTING_BOT });
    await vi.waitFor(() => expect(run.logs.some((line) => line.startsWith('The bot is ready'))).toBe(true), {
      timeout: 20_000,
    });
    expect(vi.mocked(childProcess.spawn)).toHaveBeenCalledTimes(1);
  });
});
