import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { ListenerDeps } from '../../src/listeners/deps.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { openStore, type Store } from '../../src/store/database.js';
import { type DepsOptions, listenerDeps } from './bolt.js';
import { type RecordingPoster, recordingPoster } from './fake-slack.js';

/**
 * One sandbox payment service and one SQLite store per test file, a fresh fake Slack for each
 * test, and listener dependencies wired to them whose connection pools close after each test.
 */
export function useSandbox(): {
  readonly sandbox: Sandbox;
  readonly store: Store;
  readonly poster: RecordingPoster;
  deps(opts?: DepsOptions): ListenerDeps;
} {
  let started: Sandbox | undefined;
  let store: Store | undefined;
  let poster = recordingPoster();
  let dir = '';
  const closers: (() => Promise<void>)[] = [];
  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the ${what} has not started`);
    return value;
  };
  beforeAll(async () => {
    started = await startSandbox();
    dir = mkdtempSync(join(tmpdir(), 'bot-unit-'));
    store = await openStore({ kind: 'sqlite', path: join(dir, 'bot.sqlite') });
  });
  beforeEach(() => {
    poster = recordingPoster();
  });
  afterEach(async () => {
    need(started, 'sandbox').reset();
    need(started, 'sandbox').setLatency(0);
    await Promise.all(closers.splice(0).map((close) => close()));
  });
  afterAll(async () => {
    await started?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    get sandbox() {
      return need(started, 'sandbox');
    },
    get store() {
      return need(store, 'store');
    },
    get poster() {
      return poster;
    },
    deps(opts = {}) {
      const wired = listenerDeps(need(started, 'sandbox'), need(store, 'store'), poster, opts);
      closers.push(wired.close);
      return wired.deps;
    },
  };
}
