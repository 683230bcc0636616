import { webApi } from '@slack/bolt';
import type { Config } from '../config.js';
import { boltLogger, type Logger } from '../logger.js';
import {
  type CircuitBreaker,
  CircuitOpenError,
  createHealth,
  type Health,
  InvalidApiKeyError,
  type PaymentsClient,
  PaymentTimeoutError,
  ServiceUnavailableError,
} from '../payments/index.js';
import { serviceState } from '../service-state.js';
import { startFailure } from '../slack/start-failure.js';
import { ONE_WORKSPACE } from '../store/keys.js';
import type { Tenancy } from './tenancy.js';
import { buildTenant, type Common, slackClientOptions } from './tenant.js';
import type { PaymentsFor } from './tenants.js';

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

export interface OneWorkspaceDeps {
  /** The client of PAYMENT_API_KEY. */
  payments: PaymentsClient;
  /** Fed by the payments client; the App Home reads it. */
  health: Health;
  /** Who the bot is (`fetchIdentity`, already run). */
  identity: SlackIdentity;
}

/**
 * One workspace: a fixed installation (`ONE_WORKSPACE`) built from the environment at start,
 * its bot token SLACK_BOT_TOKEN, its key PAYMENT_API_KEY, its rules BALANCE_ALLOWED_USERS and
 * _CHANNELS. Every request and every job is served by it.
 */
export function oneWorkspace(config: Config, common: Common, deps: OneWorkspaceDeps): Tenancy {
  const { identity } = deps;
  const tenant = buildTenant(common, {
    id: ONE_WORKSPACE,
    token: config.slack.botToken,
    payments: deps.payments,
    health: deps.health,
    state: serviceState(common.store, common.logger, {
      installation: ONE_WORKSPACE,
      circuit: () => common.breaker.state(),
    }),
    directory: common.directoryOf(ONE_WORKSPACE, config.slack.botToken),
    policy: {
      home: { teamId: identity.teamId, enterpriseId: identity.enterpriseId },
      allowedUsers: config.access.balanceUsers,
      allowedChannels: config.access.balanceChannels,
    },
  });
  return {
    // Given both ids, Bolt skips its own auth.test: ours already ran.
    app: { token: config.slack.botToken, botId: identity.botId, botUserId: identity.botUserId },
    routes: {},
    more: {},
    handlersOf: async () => tenant.handlers,
    partOf: async (installation) => (installation === ONE_WORKSPACE ? tenant : undefined),
    started: { mode: config.slack.mode, team: identity.teamId },
    afterStart: () => void checkPaymentKey(deps.payments, config.payments.apiUrl, common.logger),
  };
}

/**
 * One workspace's start: who the bot is (`auth.test`: a token Slack refuses stops the start),
 * and the payments client of PAYMENT_API_KEY, whose calls feed the App Home's health.
 */
export async function prepareOne(
  config: Config,
  deps: { logger: Logger; breaker: CircuitBreaker; paymentsFor: PaymentsFor },
): Promise<{ tenancy: 'one'; config: Config } & OneWorkspaceDeps> {
  const identity = await fetchIdentity(config, deps.logger);
  const health = createHealth(deps.breaker);
  const payments = deps.paymentsFor(config.payments.apiKey, {
    timeoutMs: config.payments.timeoutMs,
    onCall: (report) => health.record(report),
  });
  return { tenancy: 'one', config, payments, health, identity };
}

/**
 * Reads the balance once the bot has started, and says in one warning line, naming the setting
 * to fix, when the service refuses PAYMENT_API_KEY or cannot be reached at PAYMENT_API_URL. The
 * bot runs on either way: the service may come back, and /healthz tells liveness, not this.
 */
async function checkPaymentKey(payments: PaymentsClient, apiUrl: string, logger: Logger): Promise<void> {
  const paymentApiUrl = new URL(apiUrl).origin;
  try {
    await payments.getBalance();
    logger.info({ paymentApiUrl }, 'the payment service accepts PAYMENT_API_KEY');
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    if (error instanceof InvalidApiKeyError)
      logger.warn(
        { paymentApiUrl, setting: 'PAYMENT_API_KEY' },
        'the payment service rejected PAYMENT_API_KEY: /balance, /invoice, watches and feeds fail until it is fixed; set the API key of an active project (README → Configuration)',
      );
    else if (
      error instanceof ServiceUnavailableError ||
      error instanceof PaymentTimeoutError ||
      error instanceof CircuitOpenError
    )
      logger.warn(
        { paymentApiUrl, setting: 'PAYMENT_API_URL' },
        `could not reach the payment service at PAYMENT_API_URL (${why}): check PAYMENT_API_URL and the network; the bot runs on and uses the service once it answers`,
      );
    else
      logger.warn(
        { paymentApiUrl, setting: 'PAYMENT_API_URL' },
        `the payment service at PAYMENT_API_URL answered its balance unexpectedly (${why}): check that PAYMENT_API_URL is the service's base address`,
      );
  }
}
