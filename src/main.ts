import { readFileSync } from 'node:fs';
import dotenv from 'dotenv';
import { createBot } from './app.js';
import { type Config, ConfigError, loadSetup, type Setup } from './config.js';
import { wantsDemo } from './demo/wanted.js';
import { ListenError } from './http/server.js';
import { TokenRefusedError } from './http/socket-receiver.js';
import { prepareMany } from './installations/many.js';
import { prepareOne } from './installations/one.js';
import type { PaymentsFor } from './installations/tenants.js';
import type { Bot } from './lifecycle.js';
import { createLogger } from './logger.js';
import { createMetrics, type Metrics } from './metrics.js';
import { CircuitBreaker, createPaymentsClient, openConnections } from './payments/index.js';
import { Pacer } from './payments/pacer.js';
import { describeLocation, openStore, type Store } from './store/database.js';
import type { InstallationId } from './store/keys.js';
import { sharedPaces } from './store/pace.js';
import { WATCH_CHECKS_AT_ONCE } from './watches/service.js';

/** How long a stop waits for replies in flight; the whole stop stays within 10 s. */
const DRAIN_MS = 8_000;
const FORCED_EXIT_MS = 9_500;
/** Calls one key's background work (watches, the feed) may have open at once. */
const BACKGROUND_CONNECTIONS = 4;
/**
 * Connections of the background lane, all keys together: as many as the checks an instance runs
 * at once, so a call does not queue for one after its turn in its key's budget.
 */
const BACKGROUND_POOL_CONNECTIONS = WATCH_CHECKS_AT_ONCE;

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  name: string;
  version: string;
};

dotenv.config({ quiet: true });
// No Slack setting at all, and not production: the local demo instead (README → Try it in one minute).
if (wantsDemo(process.env)) await (await import('./demo/main.js')).runDemo('unconfigured');

let setup: Setup;
try {
  setup = loadSetup(process.env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(`${error.message}\nSee the configuration table in README.md.`);
  process.exit(1);
}

const { config } = setup;
const logger = createLogger({ level: config.logLevel, secrets: setup.secrets });
// The first line says which mode runs and why; then every setting it leaves unread, by name.
logger.info({ mode: setup.mode, tenancy: setup.tenancy }, `starting ${setup.why}`);
for (const { setting, message } of setup.unread) logger.warn({ setting }, message);
process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled promise rejection'));

// PAYMENT_API_CONCURRENCY connections for the process, every key's calls taking turns fairly for
// them, none waiting inside the pool with its deadline running; background work has its own.
const pools = openConnections({
  apiUrl: config.payments.apiUrl,
  timeoutMs: config.payments.timeoutMs,
  concurrency: config.payments.concurrency,
  background: { connections: BACKGROUND_POOL_CONNECTIONS, perKey: BACKGROUND_CONNECTIONS },
  manyKeys: setup.tenancy === 'many',
});
const userAgent = `${pkg.name}/${pkg.version} (+Slack bot; node ${process.version})`;
let store: Store | undefined;

let bot: Bot | undefined;
let stopping = false;
async function stop(signal: NodeJS.Signals): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'stopping: no new requests, finishing replies in flight');
  setTimeout(() => {
    logger.error('replies still running after the grace period; exiting anyway');
    process.exit(1);
  }, FORCED_EXIT_MS).unref();
  const { drained } = bot ? await bot.stop(DRAIN_MS) : { drained: true };
  await (drained ? pools.close() : pools.destroy());
  await store?.close();
  logger.info({ drained }, 'stopped');
  process.exit(0);
}
// Before anything starts: from here on a signal at any moment ends in a clean stop and exit 0.
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

try {
  store = await openStore(config.database, {
    onLostConnection: (error) =>
      logger.warn({ err: error }, 'the database dropped connections: the store reconnects on its next call'),
  });
  logger.info({ store: describeLocation(config.database) }, 'store ready');
  const metrics = createMetrics();
  // One breaker for the service's origin: an outage is the service's, whichever key asked.
  const breaker = new CircuitBreaker();
  const shared = store;
  // One workspace: the budget is each instance's own (README → Configuration). Many: each
  // installation's key has its budget in the store, whichever instance calls with it, paced on
  // the store's clock (on PostgreSQL the server's, whatever this machine's says).
  const paces = sharedPaces(shared, config.backgroundRps, shared.now);
  const paymentsFor = paymentsClients(config, breaker, metrics, (installation) =>
    setup.tenancy === 'many' && installation !== undefined
      ? paces(installation)
      : new Pacer(config.backgroundRps).take,
  );
  const prepared =
    setup.tenancy === 'one'
      ? await prepareOne(setup.config, { logger, breaker, paymentsFor })
      : await prepareMany(setup.config, { logger, store, paymentsFor });
  if (!stopping) {
    bot = createBot(prepared, { logger, store, metrics, breaker });
    await bot.start();
  }
} catch (error) {
  if (!stopping) {
    const message = error instanceof Error ? error.message : String(error);
    // A port it cannot have, an app-level token Slack refuses: the operator's to fix, named in
    // the message, with nothing to read in a stack.
    const saidInFull = error instanceof ListenError || error instanceof TokenRefusedError;
    logger.fatal(saidInFull ? {} : { err: error }, `could not start: ${message}`);
    await pools.destroy();
    await store?.close().catch(() => undefined);
    process.exit(1);
  }
}

/**
 * Payments clients for the service's origin, one per key: every one shares the breaker and the
 * two connection pools (taking its turns for their connections fairly with the other keys), has
 * its own background budget (PAYMENT_API_BACKGROUND_RPS, kept by the pace `paceOf` gives for the
 * client's installation), and reports each call to the metrics (and to `onCall`).
 */
function paymentsClients(
  config: { payments: Pick<Config['payments'], 'apiUrl' | 'timeoutMs' | 'concurrency'> },
  breaker: CircuitBreaker,
  metrics: Metrics,
  paceOf: (installation: InstallationId | undefined) => (deadline: AbortSignal) => Promise<boolean>,
): PaymentsFor {
  return (apiKey, options) =>
    createPaymentsClient({
      baseUrl: config.payments.apiUrl,
      apiKey,
      ...pools.interactive,
      timeoutMs: Math.min(options.timeoutMs, config.payments.timeoutMs),
      background: { ...pools.background, pace: paceOf(options.installation) },
      breaker: options.checking ? new CircuitBreaker() : breaker,
      userAgent,
      logger,
      onCall: (report) => {
        options.onCall?.(report);
        metrics.paymentCall(report, options.installation);
      },
    });
}
