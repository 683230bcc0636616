import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { App, ErrorCode } from '@slack/bolt';
import type { Config, ManyWorkspacesConfig } from './config.js';
import { feedJobs } from './feed/jobs.js';
import { createHttpServers } from './http/server.js';
import { SlackHttpReceiver } from './http/slack-receiver.js';
import { socketMode } from './http/socket-receiver.js';
import { Inflight } from './inflight.js';
import { backgroundParts } from './installations/background.js';
import { manyWorkspaces } from './installations/many.js';
import { type OneWorkspaceDeps, oneWorkspace } from './installations/one.js';
import type { Tenancy } from './installations/tenancy.js';
import { type Common, createCommon, slackClientOptions } from './installations/tenant.js';
import type { PaymentsFor } from './installations/tenants.js';
import { type Bot, lifecycle } from './lifecycle.js';
import { registerListeners } from './listeners/index.js';
import { boltLogger, type Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import { outboxBacklog, outboxJob } from './outbox.js';
import type { CircuitBreaker } from './payments/index.js';
import { createScheduler, LEASE_MS, leased, type Scheduler } from './scheduler.js';
import { breakerGate, serviceState } from './service-state.js';
import type { Store } from './store/database.js';
import { ONE_WORKSPACE } from './store/keys.js';
import type { Sealer } from './store/sealing.js';
import { checkClaims } from './watches/queries-checks.js';
import { watchPollJob } from './watches/service.js';

/** A watch check due longer ago than this counts as overdue in the metrics. */
const OVERDUE_MS = 5000;

/** What the bot serves, chosen by the environment (src/config.ts `loadSetup`), and what only that tenancy needs. */
type BotSetup =
  | ({ tenancy: 'one'; config: Config } & OneWorkspaceDeps)
  | { tenancy: 'many'; config: ManyWorkspacesConfig; sealer: Sealer; paymentsFor: PaymentsFor };

interface BotDeps {
  logger: Logger;
  store: Store;
  /** Prometheus metrics; /metrics serves them. */
  metrics: Metrics;
  /** The payment service's circuit breaker, the one every payments client uses. */
  breaker: CircuitBreaker;
  /**
   * Milliseconds since the epoch, for leases, due times and what people are shown; the store's
   * (on PostgreSQL the database server's, one clock for every instance) unless a test moves it.
   */
  clock?: () => number;
}

/** What /metrics reads at each scrape: work in flight, watches, the outbox, the breaker; every installation together. */
function readGauges(metrics: Metrics, deps: Pick<Common, 'inflight' | 'store' | 'clock' | 'breaker'>): void {
  const queries = checkClaims(deps.store);
  metrics.gauges({
    inflight: () => deps.inflight.size,
    activeWatches: () => queries.countAllActive(),
    overdueChecks: () => queries.dueCount(deps.clock() - OVERDUE_MS),
    outbox: () => outboxBacklog(deps.store),
    now: deps.clock,
    breaker: () => deps.breaker.state(),
    statements: deps.store.statements,
  });
}

/**
 * Says when the payment service stops and starts answering; background work paused meanwhile
 * resumes at once, paced by its budget.
 */
function followBreaker(
  breaker: Pick<CircuitBreaker, 'onChange'>,
  logger: Logger,
  scheduler: Pick<Scheduler, 'wake'>,
): void {
  breaker.onChange((circuit) => {
    logger[circuit === 'open' ? 'warn' : 'info'](
      { breaker: circuit },
      circuit === 'open'
        ? 'the payment service is not answering: calls fail at once, watches and feeds pause'
        : 'the payment service answers again: watches and feeds resume',
    );
    if (circuit === 'closed') scheduler.wake();
  });
}

/** This instance's name in leases: its host, its process, and a random part. */
const instanceName = () => `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

/**
 * The receiver of Slack's requests, and how Bolt is started with it: signed HTTP (nothing to
 * start: the bot's server carries it), or Socket Mode's WebSocket (one workspace only).
 */
function receiverOf(setup: BotSetup, logger: Logger) {
  const { slack } = setup.config;
  if (slack.mode === 'http') {
    const receiver = new SlackHttpReceiver({
      signingSecret: slack.signingSecret,
      logger,
      boltLogger: boltLogger(logger),
    });
    return { receiver, start: (app: App) => app.start() };
  }
  return socketMode({ appToken: slack.appToken, clientOptions: slackClientOptions(setup.config), logger });
}

/**
 * The one assembly, for both tenancies (src/installations/tenancy.ts): the receiver, the server,
 * Bolt's app, the router, one scheduler with every job, the gauges and the breaker's log. The
 * tenancy says only where a request's or a job's installation comes from.
 */
export function createBot(setup: BotSetup, deps: BotDeps): Bot {
  const { logger, store, metrics } = deps;
  const { config } = setup;
  const slackLog = boltLogger(logger);
  const clientOptions = { ...slackClientOptions(config), logger: slackLog };
  const life = lifecycle();
  const inflight = new Inflight();
  const clock = deps.clock ?? store.now;
  const owner = instanceName();
  const common = createCommon({
    settings: config,
    logger,
    store,
    metrics,
    inflight,
    clock,
    breaker: deps.breaker,
    owner,
    clientOptions,
    // Called only once the scheduler below exists: nothing is enqueued while the bot is assembled.
    wakeOutbox: () => scheduler.wake('outbox'),
  });
  const tenancy: Tenancy =
    setup.tenancy === 'one'
      ? oneWorkspace(setup.config, common, setup)
      : manyWorkspaces(setup.config, common, setup);

  const { receiver, start: startApp } = receiverOf(setup, logger);
  const { server, metrics: metricsServer } = createHttpServers(
    receiver instanceof SlackHttpReceiver
      ? { 'POST /slack/events': receiver.handle, ...tenancy.routes }
      : tenancy.routes,
    { healthz: life.healthz, metrics: metrics.route },
    logger,
    config.http.metricsPort,
  );
  // Bolt's conversation store is per-request work this bot never reads.
  const app = new App({ receiver, ...tenancy.app, logger: slackLog, clientOptions, convoStore: false });
  app.error(async (error) => {
    // An authorization failure (an uninstalled workspace) is expected; anything else is a bug.
    // Bolt's authorization failure names the workspace, never a token.
    if (error.code === ErrorCode.AuthorizationError)
      logger.warn({ err: error }, 'a Slack request was not authorized');
    else logger.error({ err: error }, 'unhandled error in a listener');
  });
  tenancy.bind?.(app);
  registerListeners(app, { logger }, tenancy.handlersOf, tenancy.more);

  const scheduler = backgroundWork(config, common, tenancy, metrics);
  readGauges(metrics, common);
  followBreaker(deps.breaker, logger, scheduler);

  return life.bot({
    server,
    app,
    scheduler,
    inflight,
    metrics: metricsServer,
    http: config.http,
    startApp: (stopped) => startApp(app, stopped),
    started: (port) => {
      logger.info({ ...tenancy.started, port }, 'bot started');
      tenancy.afterStart?.();
    },
  });
}

/**
 * Every installation's watches, feeds and messages, from one scheduler: each item is served by
 * its own installation's key and token; claims are shared fairly between installations.
 */
function backgroundWork(
  config: Pick<Config, 'watches' | 'balancePollSeconds' | 'endedRetentionDays'>,
  common: Common,
  tenancy: Tenancy,
  metrics: Metrics,
): Scheduler {
  const { store, owner, clock, logger } = common;
  const parts = backgroundParts(tenancy, common);
  const breaker = () => common.breaker.state();
  // The one workspace's key is the claim's to gate; many workspaces' keys are each served's.
  const gate =
    tenancy.perSecond === undefined
      ? serviceState(store, logger, { installation: ONE_WORKSPACE, circuit: breaker })
      : breakerGate(breaker);
  const feed = feedJobs({
    store,
    gate,
    pollSeconds: config.balancePollSeconds,
    endedRetentionDays: config.endedRetentionDays,
    feedOf: parts.feedOf,
    digestsOf: parts.digestsOf,
  });
  const lease = { owner, ms: LEASE_MS };
  const jobs = [
    leased(
      watchPollJob({
        pollSeconds: config.watches.pollSeconds,
        endedRetentionDays: config.endedRetentionDays,
        store,
        gate,
        ...(tenancy.perSecond === undefined ? {} : { perSecond: tenancy.perSecond }),
        watchesOf: parts.checkersOf,
      }),
      lease,
      clock,
      logger,
    ),
    leased(feed.poll, lease, clock, logger),
    leased(feed.digest, lease, clock, logger),
    leased(
      outboxJob({
        store,
        posterOf: parts.posterOf,
        logger,
        clock,
        onUndeliverable: parts.undeliverable,
        onDropped: (reason) => metrics.outboxDropped(reason),
        mayDeliver: parts.mayDeliver,
      }),
      lease,
      clock,
      logger,
    ),
  ];
  return createScheduler(
    { logger, inflight: common.inflight, clock, metrics, onLag: metrics.schedulerLag },
    jobs,
  );
}
