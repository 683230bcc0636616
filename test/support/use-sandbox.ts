import { afterAll, afterEach, beforeAll } from 'vitest';
import type { ListenerDeps } from '../../src/listeners/deps.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { type DepsOptions, listenerDeps } from './bolt.js';

/**
 * One sandbox payment service per test file, reset after each test, and listener dependencies
 * wired to it whose connection pools are closed after each test.
 */
export function useSandbox(): { readonly sandbox: Sandbox; deps(opts?: DepsOptions): ListenerDeps } {
  let started: Sandbox | undefined;
  const closers: (() => Promise<void>)[] = [];
  const sandbox = () => {
    if (!started) throw new Error('the sandbox has not started');
    return started;
  };
  beforeAll(async () => {
    started = await startSandbox();
  });
  afterEach(async () => {
    sandbox().reset();
    sandbox().setLatency(0);
    await Promise.all(closers.splice(0).map((close) => close()));
  });
  afterAll(async () => {
    await started?.close();
  });
  return {
    get sandbox() {
      return sandbox();
    },
    deps(opts = {}) {
      const wired = listenerDeps(sandbox(), opts);
      closers.push(wired.close);
      return wired.deps;
    },
  };
}
