import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { App, SocketModeReceiver, webApi } from '@slack/bolt';
import { type AccessPolicy, createAccess } from './access.js';
import type { Config } from './config.js';
import { createFeed } from './feed/service.js';
import { createHttpServers, type Routes } from './http/server.js';
import { SlackHttpReceiver } from './http/slack-receiver.js';
import { Inflight } from './inflight.js';
import { type Bot, lifecycle } from './lifecycle.js';
import { createHandlers, registerListeners } from './listeners/index.js';
import { boltLogger, type Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import { outboxBacklog, outboxJob } from './outbox.js';
import type { CircuitBreaker, Health, PaymentsClient } from './payments/index.js';
import { type BackgroundDeps, createScheduler, type Scheduler } from './scheduler.js';
import { serviceState } from './service-state.js';
import { createDirectory } from './slack/people.js';
import { botPoster } from './slack/poster.js';
import { createResponseUrlClient } from './slack/response-url.js';
import type { Store } from './store/database.js';
import { firstSight } from './store/events.js';
import { watchQueries } from './watches/queries.js';
import { createWatches } from './watches/service.js';

/** Within Slack's 3 s: the reply rides in the ack if the service answers by then. */
const FAST_PATH_MS = 1500;
/** A watch check due longer ago than this counts as overdue in the metrics. */
const OVERDUE_MS = 5000;
/** No call to Slack (Web API or response_url) may hang longer than this. */
const SLACK_HTTP_TIMEOUT_MS = 10_000;

/**
 * Who the bot is, from `auth.test` (docs/slack.md#install): the workspace its token belongs to,
 * or for an organisation-wide install the organisation, and its own ids.
 */
export interface SlackIdentity {
  /** The workspace; for an organisation-wide install, the id `auth.test` names (the organisation's). */
  teamId: string;
  /** The Enterprise Grid organisation, when the workspace is in one or the install is organisation-wide. */
  enterpriseId: string | undefined;
  /** Installed for the whole organisation (`is_enterprise_install`): every workspace of it is home. */
  enterpriseInstall: boolean;
  botUserId: string;
  botId: string;
}

export interface BotDeps {
  payments: PaymentsClient;
  logger: Logger;
  identity: SlackIdentity;
  store: Store;
  /** Fed by the payments client; the App Home reads it. */
  health: Health;
  /** The payment service's circuit breaker, the one the payments client uses. */
  breaker: CircuitBreaker;
  /** Prometheus metrics; /metrics serves them. */
  metrics: Metrics;
  /** Milliseconds since the epoch; the tests move it. */
  clock?: () => number;
}

export function slackClientOptions(config: { slack: { apiUrl: string } }) {
  return {
    slackApiUrl: config.slack.apiUrl,
    // Each attempt's deadline (the SDK aborts the fetch): without it a call could wait forever.
    timeout: SLACK_HTTP_TIMEOUT_MS,
    // The SDK's default keeps retrying for 30 minutes; a chat.unfurl that late is worthless.
    retryConfig: { retries: 2, factor: 2, minTimeout: 500, maxTimeout: 2000 },
  };
}

/** Why a call Slack answers at start failed, in words that tell the admin what to fix. */
function startFailure(error: unknown, call: string, variable: string, fix: string, apiUrl: string): string {
  if (error instanceof webApi.WebAPIPlatformError) {
    return `Slack rejected ${variable} (${error.data.error}); ${fix}`;
  }
  if (error instanceof webApi.WebAPIRequestError) {
    return `could not reach Slack at ${apiUrl} (${error.original.message}); check the network or SLACK_API_URL`;
  }
  if (error instanceof webApi.WebAPIHTTPError)
    return `Slack answered HTTP ${error.statusCode} to ${call} at ${apiUrl}`;
  return `${call} failed: ${error instanceof Error ? error.message : String(error)}`;
}

/** `auth.test`: checks the bot token and tells which workspace, or organisation, it belongs to. */
export async function fetchIdentity(config: Config, logger: Logger): Promise<SlackIdentity> {
  const client = new webApi.WebClient(config.slack.botToken, {
    ...slackClientOptions(config),
    logger: boltLogger(logger),
  });
  const result = await client.auth.test().catch((error: unknown) => {
    const fix = 'copy the Bot User OAuth Token again';
    throw new Error(startFailure(error, 'auth.test', 'SLACK_BOT_TOKEN', fix, config.slack.apiUrl), {
      cause: error,
    });
  });
  const enterpriseInstall = result.is_enterprise_install === true;
  const enterpriseId = result.enterprise_id || undefined;
  // An organisation-wide token may name no workspace: the organisation stands for it.
  const teamId = result.team_id || (enterpriseInstall ? enterpriseId : undefined);
  if (!teamId || !result.user_id || !result.bot_id || (enterpriseInstall && !enterpriseId)) {
    throw new Error('auth.test did not say which workspace and bot the token belongs to');
  }
  return { teamId, enterpriseId, enterpriseInstall, botUserId: result.user_id, botId: result.bot_id };
}

/** What /metrics reads at each scrape: work in flight, watches, the outbox, the breaker; every installation together. */
export function readGauges(
  metrics: Metrics,
  deps: { inflight: Inflight; store: Store; clock: () => number; breaker: CircuitBreaker },
): void {
  const queries = watchQueries(deps.store);
  metrics.gauges({
    inflight: () => deps.inflight.size,
    activeWatches: () => queries.countAllActive(),
    overdueChecks: () => queries.dueCount(deps.clock() - OVERDUE_MS),
    outbox: () => outboxBacklog(deps.store),
    now: deps.clock,
    breaker: () => deps.breaker.state(),
  });
}

/**
 * Says when the payment service stops and starts answering; background work paused meanwhile
 * resumes at once, paced by its budget.
 */
export function followBreaker(
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
export const instanceName = () => `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

/** What every listener gets whatever installation it serves: the request pipeline and the settings. */
export function sharedListenerDeps(
  config: Pick<Config, 'invoiceReply' | 'watches'> & { payments: Pick<Config['payments'], 'payUrl'> },
  deps: { logger: Logger; inflight: Inflight; clock: () => number; metrics: Metrics; store: Store },
) {
  const { clock, metrics, store } = deps;
  return {
    logger: deps.logger,
    inflight: deps.inflight,
    clock: () => new Date(clock()),
    fastPathMs: FAST_PATH_MS,
    responseUrls: createResponseUrlClient({
      timeoutMs: SLACK_HTTP_TIMEOUT_MS,
      onPost: (result) => metrics.slackCall('response_url', result),
    }),
    metrics,
    invoiceReply: config.invoiceReply,
    payUrl: config.payments.payUrl,
    maxWatchDays: config.watches.maxDays,
    firstSight: (key: string) => firstSight(store, key, clock()),
  };
}

export function createBot(config: Config, deps: BotDeps): Bot {
  const { logger } = deps;
  const slackLog = boltLogger(logger);
  const clientOptions = slackClientOptions(config);
  const life = lifecycle();

  const { slack } = config;
  const receiver =
    slack.mode === 'http'
      ? new SlackHttpReceiver({ signingSecret: slack.signingSecret, logger, boltLogger: slackLog })
      : new SocketModeReceiver({
          appToken: slack.appToken,
          logger: slackLog,
          installerOptions: { clientOptions },
        });
  const routes: Routes =
    receiver instanceof SlackHttpReceiver ? { 'POST /slack/events': receiver.handle } : {};
  const { server, metrics } = createHttpServers(
    routes,
    { healthz: life.healthz, metrics: deps.metrics.route },
    logger,
    config.http.metricsPort,
  );

  const app = new App({
    receiver,
    token: slack.botToken,
    // Given both ids, Bolt skips its own auth.test: ours already ran.
    botId: deps.identity.botId,
    botUserId: deps.identity.botUserId,
    logger: slackLog,
    clientOptions,
    // Bolt's conversation store is per-request work this bot never reads.
    convoStore: false,
  });
  app.error(async (error) => {
    logger.error({ err: error }, 'unhandled error in a listener');
  });

  const inflight = new Inflight();
  const clock = deps.clock ?? Date.now;
  const owner = instanceName();
  const poster = botPoster(slack.botToken, { ...clientOptions, logger: slackLog }, (method, result) =>
    deps.metrics.slackCall(method, result),
  );
  const state = serviceState(deps.store, logger, () => deps.breaker.state());
  const background: BackgroundDeps = {
    store: deps.store,
    payments: deps.payments,
    poster,
    state,
    logger,
    clock,
    owner,
    // Called only once the scheduler below exists: nothing is enqueued while the bot is assembled.
    wakeOutbox: () => scheduler.wake('outbox'),
  };
  const watches = createWatches({ ...background, settings: config.watches });
  const policy: AccessPolicy = {
    home: { teamId: deps.identity.teamId, enterpriseId: deps.identity.enterpriseId },
    allowedUsers: config.access.balanceUsers,
    allowedChannels: config.access.balanceChannels,
  };
  const access = createAccess(
    policy,
    createDirectory(app.client, { onCall: (result) => deps.metrics.slackCall('users.info', result) }),
  );
  const feed = createFeed({ ...background, pollSeconds: config.balancePollSeconds, policy });
  const scheduler = createScheduler(
    {
      logger,
      inflight,
      clock,
      metrics: deps.metrics,
      onLag: deps.metrics.schedulerLag,
    },
    [
      watches.pollJob(),
      feed.pollJob(),
      feed.digestJob(),
      outboxJob({
        store: deps.store,
        posterOf: async () => poster,
        logger,
        clock,
        owner,
        onUndeliverable: (row, error) => watches.undeliverable(row, error),
        onDropped: (reason) => deps.metrics.outboxDropped(reason),
        mayDeliver: (row) => feed.mayDeliver(row),
      }),
    ],
  );

  readGauges(deps.metrics, { inflight, store: deps.store, clock, breaker: deps.breaker });
  followBreaker(deps.breaker, logger, scheduler);

  const handlers = createHandlers({
    ...sharedListenerDeps(config, { logger, inflight, clock, metrics: deps.metrics, store: deps.store }),
    payments: deps.payments,
    access,
    watches,
    feed,
    poster,
    health: deps.health,
    keyRejectedSince: () => state.keyRejectedSince(),
    keySource: state.keySource,
    outboxBacklog: () => outboxBacklog(deps.store),
  });
  registerListeners(app, { logger }, async () => handlers);

  return life.bot({
    server,
    app,
    scheduler,
    inflight,
    metrics,
    http: config.http,
    // Only Socket Mode's start can fail: it opens the WebSocket with the app-level token.
    startApp: () =>
      app.start().catch((error: unknown) => {
        const fix = 'generate an app-level token with connections:write under Basic Information';
        throw new Error(startFailure(error, 'apps.connections.open', 'SLACK_APP_TOKEN', fix, slack.apiUrl), {
          cause: error,
        });
      }),
    started: (port) => logger.info({ mode: slack.mode, port, team: deps.identity.teamId }, 'bot started'),
  });
}
