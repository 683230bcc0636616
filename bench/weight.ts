/**
 * The "weight" scenario of `npm run bench`: how much heap one installation's part takes while the
 * many-workspaces bot keeps it in memory (src/installations/tenants.ts: its handlers, payments
 * client, access rules, watches, feed and poster). It builds BENCH_WEIGHT_TENANTS parts (default
 * 2,000, the number kept by default), each connected with its own key, and reads the heap after
 * a full garbage collection before and after.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { AllMiddlewareArgs } from '@slack/bolt';
import { Pool } from 'undici';
import { Inflight } from '../src/inflight.js';
import { createCommon } from '../src/installations/tenant.js';
import { createTenants } from '../src/installations/tenants.js';
import { createLogger } from '../src/logger.js';
import { CircuitBreaker, createPaymentsClient } from '../src/payments/index.js';
import { Pacer } from '../src/payments/pacer.js';
import { openStore } from '../src/store/database.js';
import type { InstallationSummary, Installations } from '../src/store/installations.js';
import { round } from './lib.js';

export interface WeightResult {
  tenants: number;
  /** Heap taken per installation kept, in KB. */
  perTenantKb: number;
  /** Heap taken by all of them, in MB. */
  totalMb: number;
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

export async function weightScenario(serviceUrl: string, tenants = 2000): Promise<WeightResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-weight-'));
  const store = await openStore({ kind: 'sqlite', path: join(dir, 'bot.sqlite') });
  const pool = new Pool(serviceUrl);
  const breaker = new CircuitBreaker();
  const summary = (id: string): InstallationSummary => ({
    id,
    home: { teamId: id, enterpriseId: undefined },
    enterpriseInstall: false,
    installerUserId: `U0${id}`,
    account: { connectedBy: `U0${id}`, connectedAt: 1 },
    tokenExpiresAt: undefined,
  });
  const parts = createTenants({
    common: createCommon({
      settings: {
        invoiceReply: 'in_channel',
        watches: { pollSeconds: 30, graceMinutes: 60, maxDays: 7, limitPerChannel: 25 },
        balancePollSeconds: 60,
        payments: { payUrl: undefined, timeoutMs: 8000 },
      },
      logger: createLogger({ level: 'silent', secrets: [] }),
      store,
      metrics: { request: () => undefined, slackCall: () => undefined },
      breaker,
      inflight: new Inflight(),
      clock: Date.now,
      owner: 'bench',
      clientOptions: { slackApiUrl: 'http://127.0.0.1:9/api/' },
      wakeOutbox: () => undefined,
    }),
    tokenFor: async (inst) => `xoxb-${inst.id}`,
    installations: { paymentKeyOf: async (id: string) => `key-${id}` } as unknown as Installations,
    paymentsFor: (apiKey, options) =>
      createPaymentsClient({
        baseUrl: serviceUrl,
        apiKey,
        dispatcher: pool,
        userAgent: 'bench',
        timeoutMs: options.timeoutMs,
        breaker,
        background: { dispatcher: pool, pace: new Pacer(5).take },
      }),
    connect: async () => undefined,
    publishAccountHome: async () => undefined,
    max: tenants,
  });
  const build = async (id: string) => {
    const context = {
      installation: summary(id),
      botToken: `xoxb-${id}`,
    } as unknown as AllMiddlewareArgs['context'];
    await parts.handlersOf(context);
  };
  // Every module and shared object exists before the first reading.
  await build('warm-up');
  parts.forget('warm-up');
  const before = heap();
  for (let i = 0; i < tenants; i += 1) await build(`T${i}`);
  const after = heap();
  const result = {
    tenants: parts.size,
    perTenantKb: round((after - before) / parts.size / 1024, 1),
    totalMb: round((after - before) / 2 ** 20, 1),
  };
  await pool.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return result;
}
