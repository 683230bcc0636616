import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Dispatcher, Pool } from 'undici';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createBot } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import { fetchIdentity } from '../../src/installations/one.js';
import type { Bot } from '../../src/lifecycle.js';
import type { Logger } from '../../src/logger.js';
import { createMetrics } from '../../src/metrics.js';
import { CircuitBreaker, createHealth, createPaymentsClient } from '../../src/payments/index.js';
import { Pacer } from '../../src/payments/pacer.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { openStore, type Store } from '../../src/store/database.js';
import { type SlackStandIn, startSlackStandIn } from './slack-stand-in.js';

/**
 * The bot as main.ts assembles it, in the test's own process (not started): for tests that
 * must reach inside it, such as moving its clock by hours. Payment calls go to `config`'s
 * service through `dispatcher`.
 */
export async function assembledBot(opts: {
  config: Config;
  store: Store;
  logger: Logger;
  dispatcher: Dispatcher;
  /** Milliseconds since the epoch, as the bot reads them; the real clock by default. */
  clock?: () => number;
  /** The payment service's breaker, when the test watches it; a default one otherwise. */
  breaker?: CircuitBreaker;
}): Promise<Bot> {
  const { config, logger } = opts;
  const breaker = opts.breaker ?? new CircuitBreaker();
  const metrics = createMetrics();
  const payments = createPaymentsClient({
    baseUrl: config.payments.apiUrl,
    apiKey: config.payments.apiKey,
    dispatcher: opts.dispatcher,
    userAgent: 'payments-slack-bot/test',
    timeoutMs: 2000,
    background: { dispatcher: opts.dispatcher, pace: new Pacer(50).take },
    onCall: (report) => metrics.paymentCall(report),
    breaker,
  });
  return createBot(
    {
      tenancy: 'one',
      config,
      payments,
      health: createHealth(breaker, opts.clock),
      identity: await fetchIdentity(config, logger),
    },
    { logger, store: opts.store, metrics, breaker, ...(opts.clock ? { clock: opts.clock } : {}) },
  );
}

/** What a file of assembled-bot tests shares; `bots` are stopped after each test. */
export interface AssembledWorld {
  sandbox: Sandbox;
  slack: SlackStandIn;
  /** The shared store, in a temporary folder. */
  store: Store;
  /** Payment calls to the sandbox. */
  pool: Pool;
  bots: Bot[];
  /** A store of the test's own in the same folder, without what earlier tests left running. */
  ownStore(): Promise<Store>;
}

/** The sandbox, the Slack stand-in (team T0HOME) and a store for the file's tests, gone after them. */
export function useAssembledWorld(tokens: { botToken: string; appToken: string }): AssembledWorld {
  const stores: Store[] = [];
  let dir = '';
  const world = {
    bots: [] as Bot[],
    async ownStore() {
      const own = await openStore({ kind: 'sqlite', path: join(dir, `own-${stores.length}.sqlite`) });
      stores.push(own);
      return own;
    },
  } as AssembledWorld;
  beforeAll(async () => {
    world.sandbox = await startSandbox();
    world.slack = await startSlackStandIn({ teamId: 'T0HOME', ...tokens });
    dir = mkdtempSync(join(tmpdir(), 'bot-assembled-'));
    world.store = await openStore({ kind: 'sqlite', path: join(dir, 'bot.sqlite') });
    world.pool = new Pool(world.sandbox.url);
  });
  afterEach(async () => {
    await Promise.all(world.bots.splice(0).map((bot) => bot.stop(1000)));
  });
  afterAll(async () => {
    await world.pool.close();
    await Promise.all([world.store, ...stores].map((s) => s.close()));
    await Promise.all([world.sandbox.close(), world.slack.close()]);
    rmSync(dir, { recursive: true, force: true });
  });
  return world;
}
