import type { App, Authorize } from '@slack/bolt';
import type { ManyWorkspacesConfig } from '../config.js';
import { workspaceRoutes } from '../listeners/index.js';
import { connectCommand, publishAccountHome } from '../listeners/workspaces/payment-account.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/database.js';
import { firstSight } from '../store/events.js';
import {
  createInstallations,
  type InstallationSummary,
  installationIdFor,
  NoInstallationError,
} from '../store/installations.js';
import type { InstallationId } from '../store/keys.js';
import { prepareSealing } from '../store/rotation.js';
import { createSealer, type Sealer } from '../store/sealing.js';
import { endWatchesOfAccount } from '../watches/account.js';
import { tokenRotation } from './authorization.js';
import { boltClients } from './bolt-clients.js';
import { createInstaller } from './oauth.js';
import type { Tenancy } from './tenancy.js';
import type { Common } from './tenant.js';
import { createTenants, KEPT_INSTALLATIONS, type PaymentsFor } from './tenants.js';

interface ManyWorkspacesDeps {
  /** Seals and opens the installations' secrets (ENCRYPTION_KEY, already checked against the store). */
  sealer: Sealer;
  /** A payments client for a workspace's key, sharing the service's breaker and connections. */
  paymentsFor: PaymentsFor;
}

/**
 * Many workspaces' start: ENCRYPTION_KEY checked against what the store holds (and what an
 * ENCRYPTION_KEY_PREVIOUS sealed, sealed again), before anything is served.
 */
export async function prepareMany(
  config: ManyWorkspacesConfig,
  deps: { logger: Logger; store: Store; paymentsFor: PaymentsFor },
): Promise<{ tenancy: 'many'; config: ManyWorkspacesConfig } & ManyWorkspacesDeps> {
  const sealer = createSealer(config.encryption);
  const sealing = await prepareSealing(deps.store, sealer, Date.now());
  deps.logger.info({ sealing }, 'ENCRYPTION_KEY opens every stored secret');
  return { tenancy: 'many', config, sealer, paymentsFor: deps.paymentsFor };
}

/**
 * Many workspaces (README → Offer it to many workspaces): installed with "Add to Slack", each
 * request authorized through its workspace's installation (Bolt's `authorize` from the
 * InstallProvider, which refreshes rotating tokens), in HTTP mode only; each request, watch
 * check, feed reading, digest and message served by its installation's own part (./tenants.ts).
 */
export function manyWorkspaces(
  config: ManyWorkspacesConfig,
  common: Common,
  deps: ManyWorkspacesDeps,
): Tenancy {
  const { logger, store, clock, owner } = common;
  const installations = createInstallations(store, deps.sealer, clock);
  const installer = createInstaller(config, {
    installations,
    logger,
    clientOptions: common.clientOptions,
    firstSight: (key) => firstSight(store, key, clock()),
  });
  const authorizationOf = tokenRotation({
    store,
    installations,
    refresher: installer.refresher,
    owner,
    clock,
    logger,
  });
  let clients: ReturnType<typeof boltClients> | undefined;

  /** The installation, resolved once at the edge: its token (refreshed if need be), who installed it, its account. */
  const authorize: Authorize<boolean> = async (source) => {
    const id = installationIdFor(source);
    const installation = id ? await installations.summaryOf(id) : undefined;
    if (!id || !installation)
      throw new NoInstallationError(`no installation for ${id ?? 'a request without a workspace'}`);
    const authorization = await authorizationOf(installation, source);
    clients?.served(authorization.teamId ?? authorization.enterpriseId, authorization.botToken, id);
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

  const tenants = createTenants({
    common,
    tokenFor,
    installations,
    paymentsFor: deps.paymentsFor,
    connect: connectCommand,
    publishAccountHome,
  });
  /** Drops what this process keeps of an installation: its part, and Bolt's clients of its tokens. */
  const forget = (id: InstallationId) => {
    tenants.forget(id);
    clients?.forget(id);
  };

  return {
    app: { authorize },
    routes: installer.routes,
    more: workspaceRoutes({
      logger,
      inflight: common.inflight,
      metrics: common.metrics,
      installations,
      paymentsFor: deps.paymentsFor,
      clock,
      republish: tenants.publishHome,
      endWatches: (trx, installation, now) =>
        endWatchesOfAccount(trx, { store, settings: common.settings.watches, installation }, now),
      wakeOutbox: common.wakeOutbox,
      forget,
    }),
    handlersOf: tenants.handlersOf,
    partOf: tenants.partOf,
    summariesOf: installations.summariesOf,
    bind(app: App) {
      clients = boltClients(app, KEPT_INSTALLATIONS);
    },
    perSecond: config.backgroundRps,
    started: { mode: 'http', tenancy: 'many' },
  };
}
