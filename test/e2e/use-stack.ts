import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { type Stack, startStack } from './harness.js';

/**
 * One started stack per test file: sandbox faults and latency reset after each test, and each
 * test ends by checking that every message the bot sent in it passed the Block Kit checker.
 */
export function useStack(
  opts: Parameters<typeof startStack>[0] = {},
): Pick<Stack, 'sandbox' | 'slack' | 'bot'> {
  let stack: Stack | undefined;
  const current = () => {
    if (!stack) throw new Error('the stack has not started');
    return stack;
  };
  beforeAll(async () => {
    stack = await startStack(opts);
    if (opts.socketMode) await stack.slack.socket.connected();
  });
  afterEach(() => {
    current().sandbox.reset();
    current().sandbox.setLatency(0);
    expect(current().slack.problems.splice(0)).toEqual([]);
  });
  afterAll(async () => {
    await stack?.close();
  });
  return {
    get sandbox() {
      return current().sandbox;
    },
    get slack() {
      return current().slack;
    },
    get bot() {
      return current().bot;
    },
  };
}
