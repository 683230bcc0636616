import { App, type Authorize } from '@slack/bolt';
import { followBreaker, instanceName, readGauges, sharedListenerDeps, slackClientOptions } from '../app.js';
import type { ManyWorkspacesConfig } from '../config.js';
import { feedJobs } from '../feed/jobs.js';
import { createHttpServers, type Routes } from '../http/server.js';
import { SlackHttpReceiver } from '../http/slack-receiver.js';
import { Inflight } from '../inflight.js';
import { type Bot, lifecycle } from '../lifecycle.js';
import { registerListeners } from '../listeners/index.js';
import { connectCommand, publishAccountHome } from '../listeners/workspaces/payment-account.js';
import { workspaceRoutes } from '../listeners/workspaces/routes.js';
import { boltLogger, type Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { outboxJob } from '../outbox.js';
import type { CircuitBreaker } from '../payments/index.js';
import { createScheduler } from '../scheduler.js';
import { serviceState } from '../service-state.js';
import type { Store } from '../store/database.js';
import { firstSight } from '../store/events.js';
import {
  createInstallations,
  type InstallationSummary,
  installationId,
  NoInstallationError,
} from '../store/installations.js';
import type { Sealer } from '../store/sealing.js';
import { watchPollJob } from '../watches/service.js';
import { tokenRotation } from './authorization.js';
import { boltClients } from './bolt-clients.js';
import { createInstaller } from './oauth.js';
import { createTenants, KEPT_INSTALLATIONS, type PaymentsFor } from './tenants.js';

export interface WorkspacesBotDeps {
  logger: Logger;
  store: Store;
  /** Seals and opens the installations' secrets (ENCRYPTION_KEY, already checked against the store). */
  sealer: Sealer;
  metrics: Metrics;
  /** A payments client for a workspace's key, sharing the service's breaker and connections. */
  paymentsFor: PaymentsFor;
  /** The payment service's circuit breaker, the one every installation's client uses. */
  breaker: CircuitBreaker;
  /** Milliseconds since the epoch; the tests move it. */
  clock?: () => number;
}

/**
 * The bot serving many workspaces (README → Offer it to many workspaces): installed with "Add to
 * Slack", each request authorized through its workspace's installation (Bolt's `authorize` from
 * the InstallProvider, which refreshes rotating tokens), in HTTP mode only. Each request is
 * served by its installation's own handlers (src/installations/tenants.ts), and so is each
 * watch's check, each feed's balance reading and digest, and each message.
 */
export function createWorkspacesBot(config: ManyWorkspacesConfig, deps: WorkspacesBotDeps): Bot {
  const { logger } = deps;
  const clock = deps.clock ?? Date.now;
  const slackLog = boltLogger(logger);
  const clientOptions = slackClientOptions(config);
  const installations = createInstallations(deps.store, deps.sealer, clock);
  const installer = createInstaller(config, {
    installations,
    logger,
    clientOptions,
    firstSight: (key) => firstSight(deps.store, key, clock()),
  });
  const life = lifecycle();

  const owner = instanceName();
  const authorizationOf = tokenRotation({
    store: deps.store,
    installations,
    refresher: installer.refresher,
    owner,
    clock,
    logger,
  });

  /** The installation, resolved once at the edge: its token (refreshed if need be), who installed it, its account. */
  const authorize: Authorize<boolean> = async (source) => {
    const id = installationId(source);
    const installation = id ? await installations.summaryOf(id) : undefined;
    if (!id || !installation)
      throw new NoInstallationError(`no installation for ${id ?? 'a request without a workspace'}`);
    const authorization = await authorizationOf(installation, source);
    clients.served(authorization.teamId ?? authorization.enterpriseId, authorization.botToken, id);
    return { ...authorization, installation };
  };

  /** Background work's token for an installation, through the same path as requests' (rotation included). */
  const tokenFor = async (installation: InstallationSummary) => {
    const { home, enterpriseInstall } = installation;
    const source = {
      teamId: enterpriseInstall ? undefined : home.teamId,
      enterpriseId: home.enterpriseId,
      isEnterpriseInstall: enterpriseInstall,
    };
    return (await authorizationOf(installation, source)).botToken;
  };

  const receiver = new SlackHttpReceiver({
    signingSecret: config.slack.signingSecret,
    logger,
    boltLogger: slackLog,
  });

  const routes: Routes = { 'POST /slack/events': receiver.handle, ...installer.routes };
  const { server, metrics } = createHttpServers(
    routes,
    { healthz: life.healthz, metrics: deps.metrics.route },
    logger,
    config.http.metricsPort,
  );

  const app = new App({ receiver, authorize, logger: slackLog, clientOptions, convoStore: false });
  const clients = boltClients(app, KEPT_INSTALLATIONS);
  /** Drops what this process keeps of an installation: its part, and Bolt's clients of its tokens. */
  const forget = (id: string) => {
    tenants.forget(id);
    clients.forget(id);
  };
  app.error(async (error) => {
    // Bolt's authorization failure names the workspace, never a token.
    logger.warn({ err: error }, 'a Slack request was not handled');
  });
  const inflight = new Inflight();
  const tenants = createTenants({
    shared: sharedListenerDeps(config, { logger, inflight, clock, metrics: deps.metrics, store: deps.store }),
    background: {
      store: deps.store,
      owner,
      settings: config.watches,
      pollSeconds: config.balancePollSeconds,
      clock,
      // Called only once the scheduler below exists.
      wakeOutbox: () => scheduler.wake('outbox'),
    },
    tokenFor,
    installations,
    paymentsFor: deps.paymentsFor,
    timeoutMs: config.payments.timeoutMs,
    breaker: deps.breaker,
    metrics: deps.metrics,
    clientOptions: { ...clientOptions, logger: slackLog },
    connect: connectCommand,
    publishAccountHome,
  });
  registerListeners(
    app,
    { logger },
    tenants.handlersOf,
    workspaceRoutes({
      logger,
      inflight,
      metrics: deps.metrics,
      installations,
      paymentsFor: deps.paymentsFor,
      clock,
      republish: tenants.publishHome,
      forget,
    }),
  );

  // Every installation's watches, feeds and messages, from one scheduler: each item is served by
  // its own installation's key and token; claims are shared fairly between installations.
  const gate = serviceState(deps.store, logger, () => deps.breaker.state());
  const feed = feedJobs({
    store: deps.store,
    owner,
    gate,
    pollSeconds: config.balancePollSeconds,
    feedOf: tenants.feedOf,
  });
  const scheduler = createScheduler(
    { logger, inflight, clock, metrics: deps.metrics, onLag: deps.metrics.schedulerLag },
    [
      watchPollJob({
        pollSeconds: config.watches.pollSeconds,
        store: deps.store,
        owner,
        clock,
        gate,
        perSecond: config.backgroundRps,
        watchesOf: tenants.watchesOf,
      }),
      feed.poll,
      feed.digest,
      outboxJob({
        store: deps.store,
        posterOf: tenants.posterOf,
        logger,
        clock,
        owner,
        onUndeliverable: async (row, error) =>
          (await tenants.watchesOf(row.installation_id))?.undeliverable(row, error),
        onDropped: (reason) => deps.metrics.outboxDropped(reason),
        mayDeliver: tenants.mayDeliver,
      }),
    ],
  );
  readGauges(deps.metrics, { inflight, store: deps.store, clock, breaker: deps.breaker });
  followBreaker(deps.breaker, logger, scheduler);

  return life.bot({
    server,
    app,
    scheduler,
    inflight,
    metrics,
    http: config.http,
    started: (port) => logger.info({ mode: 'http', tenancy: 'many', port }, 'bot started'),
  });
}
