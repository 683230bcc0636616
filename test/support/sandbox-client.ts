import { Pool } from 'undici';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createPaymentsClient, type PaymentsClient } from '../../src/payments/index.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';

type ClientOptions = Parameters<typeof createPaymentsClient>[0];

/**
 * One sandbox payment service per test file, reset after each test, and payment clients of its
 * key through one connection pool: `defaults` for every client of the file, `overrides` per call.
 */
export function useSandboxClient(defaults: Partial<ClientOptions> = {}): {
  readonly sandbox: Sandbox;
  readonly pool: Pool;
  client(overrides?: Partial<ClientOptions>): PaymentsClient;
} {
  let sandbox: Sandbox | undefined;
  let pool: Pool | undefined;
  const need = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the sandbox has not started');
    return value;
  };
  beforeAll(async () => {
    sandbox = await startSandbox();
    pool = new Pool(sandbox.url);
  });
  afterAll(async () => {
    await pool?.close();
    await sandbox?.close();
  });
  afterEach(() => {
    need(sandbox).reset();
    need(sandbox).setLatency(0);
  });
  return {
    get sandbox() {
      return need(sandbox);
    },
    get pool() {
      return need(pool);
    },
    client: (overrides = {}) =>
      createPaymentsClient({
        baseUrl: need(sandbox).url,
        apiKey: need(sandbox).apiKey,
        dispatcher: need(pool),
        userAgent: 'payments-slack-bot/test',
        timeoutMs: 2000,
        ...defaults,
        ...overrides,
      }),
  };
}
