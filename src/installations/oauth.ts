import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { webApi } from '@slack/bolt';
import oauth, {
  type CodedError,
  type Installation,
  type InstallationStore,
  type InstallProvider,
  type StateStore,
} from '@slack/oauth';
import type { ManyWorkspacesConfig } from '../config.js';
import type { Routes } from '../http/server.js';
import { managerOf } from '../listeners/workspaces/payment-account.js';
import { boltLogger, type Logger } from '../logger.js';
import { type Installations, installationIdOf } from '../store/installations.js';
import {
  addToSlackPage,
  installedPage,
  installFailedPage,
  reinstalledMessage,
  welcomeMessage,
} from '../views/installation.js';

// A CommonJS package whose exports Node cannot name from ESM.
const { ClearStateStore, ErrorCode, InstallProvider: Provider, InvalidStateError } = oauth;

export const INSTALL_PATH = '/slack/install';
export const REDIRECT_PATH = '/slack/oauth_redirect';

/**
 * The bot's scopes: what Add to Slack asks for, and what every manifest lists (scripts/manifest.ts
 * prints them, with why each is needed). test/manifest.test.ts checks them against the Web API
 * methods and events src/ uses: exactly those, no more.
 */
export const BOT_SCOPES = [
  'commands',
  'links:read',
  'links:write',
  'chat:write',
  'chat:write.public',
  'channels:history',
  'groups:history',
  'im:history',
  'mpim:history',
  'channels:read',
  'groups:read',
  'im:read',
  'mpim:read',
  'users:read',
] as const;

interface InstallerDeps {
  installations: Installations;
  logger: Logger;
  /** Options of every Web API client: Slack's address, deadlines, retries. */
  clientOptions: webApi.WebClientOptions;
  /** True the first time a key is seen by any instance (src/store/events.ts). */
  firstSight: (key: string) => Promise<boolean>;
}

interface Installer {
  /** Bolt's `authorize`: the installation's token for each request, refreshed when it expires soon. */
  readonly provider: InstallProvider;
  /**
   * A provider for one token refresh, over `store`: its `oauth.v2.access` is tried once (no
   * retries), so a refresh ends within one Slack deadline, inside its lease.
   */
  refresher(store: InstallationStore): InstallProvider;
  readonly routes: Routes;
}

/**
 * A state is good once: `@slack/oauth`'s own store checks its signature, its age (10 minutes) and
 * the browser's cookie; this refuses it a second time, on any instance.
 */
function onceOnly(inner: StateStore, firstSight: (key: string) => Promise<boolean>): StateStore {
  return {
    generateStateParam: (options, now) => inner.generateStateParam(options, now),
    async verifyStateParam(now, state) {
      const options = await inner.verifyStateParam(now, state);
      const key = `oauth_state:${createHash('sha256').update(state).digest('hex')}`;
      if (!(await firstSight(key))) throw new InvalidStateError('The state parameter was used already.');
      return options;
    },
  };
}

/** Why an install failed, for the person in the browser. */
function failureReason(error: CodedError): string {
  switch (error.code) {
    case ErrorCode.InvalidStateError:
    case ErrorCode.MissingStateError:
      return 'This install link has expired, was used already, or was started in another browser (installs started from Slack’s own pages must start here instead).';
    case ErrorCode.AuthorizationError:
      return 'The install was cancelled in Slack.';
    default:
      return 'Slack did not complete the install.';
  }
}

const html = (res: ServerResponse, status: number, body: string) => {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(body);
};

/**
 * "Add to Slack" with `@slack/oauth`'s InstallProvider: `GET /slack/install` shows the Add to
 * Slack page and sets the state cookie; `GET /slack/oauth_redirect` verifies the state and
 * exchanges the code with `oauth.v2.access` at SLACK_API_URL, then stores the installation
 * (sealed) and welcomes the installer in a direct message.
 */
export function createInstaller(config: ManyWorkspacesConfig, deps: InstallerDeps): Installer {
  const { logger } = deps;
  const provider = new Provider({
    clientId: config.slack.clientId,
    clientSecret: config.slack.clientSecret,
    installationStore: deps.installations,
    stateStore: onceOnly(new ClearStateStore(config.slack.stateSecret), deps.firstSight),
    logger: boltLogger(logger),
    clientOptions: deps.clientOptions,
    renderHtmlForInstallPath: addToSlackPage,
  });
  const installOptions = { scopes: [...BOT_SCOPES] };
  // A refresh that fails is logged by @slack/oauth as an error and otherwise ignored: the token
  // the bot has stays good for a while and the next request tries again, so it is a warning.
  const refreshLog = boltLogger(logger);
  refreshLog.error = refreshLog.warn;
  const refresher = (store: InstallationStore) =>
    new Provider({
      clientId: config.slack.clientId,
      clientSecret: config.slack.clientSecret,
      installationStore: store,
      // Never used (a refresher handles no install); without one @slack/oauth warns at each refresh.
      stateSecret: config.slack.stateSecret,
      logger: refreshLog,
      clientOptions: { ...deps.clientOptions, retryConfig: { retries: 0 } },
    });

  /**
   * A first install welcomes its installer; installing again (anyone may) tells who ran it that
   * the install was renewed and who still manages the payment account.
   */
  async function welcome(installation: Installation): Promise<void> {
    const token = installation.bot?.token;
    const installer = installation.user.id;
    const id = installationIdOf(installation);
    const stored = id === undefined ? undefined : await deps.installations.summaryOf(id);
    const again =
      stored !== undefined && (stored.installerUserId !== installer || stored.account !== undefined);
    const message = again ? reinstalledMessage(installer, managerOf(stored)) : welcomeMessage(installer);
    const client = new webApi.WebClient(token, { ...deps.clientOptions, logger: boltLogger(logger) });
    await client.chat.postMessage({ channel: installer, ...message });
  }

  return {
    provider,
    refresher,
    routes: {
      [`GET ${INSTALL_PATH}`]: (req, res) => provider.handleInstallPath(req, res, {}, installOptions),
      [`GET ${REDIRECT_PATH}`]: (req, res) =>
        provider.handleCallback(
          req,
          res,
          {
            async successAsync(installation, _options, _req, response) {
              const team = installation.team?.id;
              const enterprise = installation.enterprise?.id;
              logger.info(
                { team, enterprise, org_wide: installation.isEnterpriseInstall === true },
                'installed',
              );
              await welcome(installation as Installation).catch((error: unknown) =>
                logger.warn({ err: error, team, enterprise }, 'could not welcome the installer'),
              );
              html(response, 200, installedPage());
            },
            async failureAsync(error, _options, _req, response) {
              logger.warn({ code: error.code }, `install refused: ${error.message}`);
              html(response, 400, installFailedPage(INSTALL_PATH, failureReason(error)));
            },
          },
          installOptions,
        ),
    },
  };
}
