import type { IncomingMessage, ServerResponse } from 'node:http';
import { App, type Authorize, type AuthorizeResult } from '@slack/bolt';
import { type Bot, sharedListenerDeps, slackClientOptions } from '../app.js';
import type { ManyWorkspacesConfig } from '../config.js';
import { createHttpServer, type Routes } from '../http/server.js';
import { SlackHttpReceiver } from '../http/slack-receiver.js';
import { Inflight } from '../inflight.js';
import { registerListeners } from '../listeners/index.js';
import { registerAppUninstalled } from '../listeners/workspaces/app-uninstalled.js';
import {
  connectCommand,
  publishAccountHome,
  registerPaymentAccount,
} from '../listeners/workspaces/payment-account.js';
import { registerTokensRevoked } from '../listeners/workspaces/tokens-revoked.js';
import { boltLogger, type Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { CircuitBreaker } from '../payments/index.js';
import type { Store } from '../store/database.js';
import { firstSight } from '../store/events.js';
import {
  createInstallations,
  installationId,
  NoInstallationError,
  refreshingAlone,
} from '../store/installations.js';
import type { Sealer } from '../store/sealing.js';
import { ACTION_CONNECT, ACTION_DISCONNECT, VIEW_PAYMENT_ACCOUNT } from '../views/installation.js';
import { createInstaller } from './oauth.js';
import { createTenants, type PaymentsFor } from './tenants.js';

/** `@slack/oauth` refreshes a rotating token that expires within two hours. */
const ROTATION_WINDOW_MS = 2 * 60 * 60_000;

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
 * served by its installation's own handlers (src/installations/tenants.ts). Background work
 * (watches, the payments feed) does not run in this mode yet.
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
  let ready = false;

  // Refreshes under way in this process, by installation: concurrent requests share one.
  const refreshes = new Map<string, Promise<AuthorizeResult>>();
  const refreshOnce = (id: string, source: Parameters<Authorize<boolean>>[0]) => {
    let refresh = refreshes.get(id);
    if (!refresh) {
      refresh = refreshingAlone(deps.store, id, () => installer.provider.authorize(source)).finally(() =>
        refreshes.delete(id),
      );
      refreshes.set(id, refresh);
    }
    return refresh;
  };

  /** The installation, resolved once at the edge: its token (refreshed if need be), who installed it, its account. */
  const authorize: Authorize<boolean> = async (source) => {
    const id = installationId(source);
    const installation = id ? await installations.summaryOf(id) : undefined;
    if (!id || !installation)
      throw new NoInstallationError(`no installation for ${id ?? 'a request without a workspace'}`);
    const expiresSoon =
      installation.tokenExpiresAt !== undefined && installation.tokenExpiresAt - clock() < ROTATION_WINDOW_MS;
    // A copy each: Bolt fills in the request's own team and user on the result it is given.
    const result = {
      ...(await (expiresSoon ? refreshOnce(id, source) : installer.provider.authorize(source))),
    };
    return { ...result, installation };
  };

  const receiver = new SlackHttpReceiver({
    signingSecret: config.slack.signingSecret,
    logger,
    boltLogger: slackLog,
  });
  const healthz = (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: ready }));
  };
  const routes: Routes = {
    'GET /healthz': healthz,
    'GET /metrics': deps.metrics.route,
    'POST /slack/events': receiver.handle,
    ...installer.routes,
  };
  const server = createHttpServer(routes, logger);

  const app = new App({ receiver, authorize, logger: slackLog, clientOptions, convoStore: false });
  app.error(async (error) => {
    // Bolt's authorization failure names the workspace, never a token.
    logger.warn({ err: error }, 'a Slack request was not handled');
  });
  const inflight = new Inflight();
  const tenants = createTenants({
    shared: sharedListenerDeps(config, { logger, inflight, clock, metrics: deps.metrics, store: deps.store }),
    installations,
    paymentsFor: deps.paymentsFor,
    timeoutMs: config.payments.timeoutMs,
    breaker: deps.breaker,
    metrics: deps.metrics,
    clientOptions: { ...clientOptions, logger: slackLog },
    connect: connectCommand,
    publishAccountHome,
  });
  registerListeners(app, { logger }, tenants.handlersOf, {
    actions: [ACTION_CONNECT, ACTION_DISCONNECT],
    events: ['app_uninstalled', 'tokens_revoked'],
    views: [VIEW_PAYMENT_ACCOUNT],
  });
  registerAppUninstalled(app, installations, logger, tenants.forget);
  registerTokensRevoked(app, installations, logger, tenants.forget);
  registerPaymentAccount(app, {
    installations,
    paymentsFor: deps.paymentsFor,
    logger,
    clock,
    republish: tenants.publishHome,
  });

  return {
    async start() {
      const port = await server.listen(config.http.port, config.http.host);
      await app.start();
      ready = true;
      logger.info({ mode: 'http', tenancy: 'many', port }, 'bot started');
      return { port };
    },
    async stop(graceMs) {
      ready = false;
      const closed = server.close();
      await app.stop();
      const drained = await inflight.drain(graceMs);
      server.closeAll();
      await closed;
      return { drained };
    },
  };
}
