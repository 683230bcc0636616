import type { Dispatcher } from 'undici';
import { createBot } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import { fetchIdentity } from '../../src/installations/one.js';
import type { Bot } from '../../src/lifecycle.js';
import type { Logger } from '../../src/logger.js';
import { createMetrics } from '../../src/metrics.js';
import { CircuitBreaker, createHealth, createPaymentsClient } from '../../src/payments/index.js';
import { Pacer } from '../../src/payments/pacer.js';
import type { Store } from '../../src/store/database.js';

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
}): Promise<Bot> {
  const { config, logger } = opts;
  const breaker = new CircuitBreaker();
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
