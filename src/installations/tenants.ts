import type { Context, webApi } from '@slack/bolt';
import type { CommandArgs } from '../listeners/args.js';
import { publishHome } from '../listeners/home.js';
import { type Handlers, notConnectedHandlers } from '../listeners/index.js';
import { lazily } from '../listeners/lazily.js';
import { installationOf, mayManage } from '../listeners/workspaces/payment-account.js';
import { type CallReport, createHealth, type PaymentsClient } from '../payments/index.js';
import { serviceState } from '../service-state.js';
import type { InstallationSummary, Installations } from '../store/installations.js';
import type { InstallationId } from '../store/keys.js';
import { paymentAccountBlocks } from '../views/installation.js';
import { ROTATION_WINDOW_MS } from './authorization.js';
import { buildTenant, type Common, type Installation, ownPipeline, type Tenant } from './tenant.js';

/**
 * Background work keeps an installation's token while the store holds the same sealing of it
 * (`tokenSealing`, read with the installation's summary: a claim reads many at once), rather
 * than opening it again: a new, rotated or revoked token changes it. A rotating token within
 * two hours of its expiry is asked for again at most this often (it is refreshed then). Its
 * account is read every time (one row, no secret opened): once a key change or an uninstall
 * commits, no check or reading starts with the key before it, on any instance.
 */
const TOKEN_KEPT_MS = 60_000;

/** A payments client for one key, sharing the service's breaker and connections with every other. */
export type PaymentsFor = (
  apiKey: string,
  options: {
    timeoutMs: number;
    onCall?: (report: CallReport) => void;
    /** Whose key it is: its metrics carry it, and its background calls keep the key's budget with every instance's. */
    installation?: InstallationId;
    /**
     * A key being checked before it is kept (the Connect modal): a breaker of its own, so that a
     * key that anyone may submit, answered slowly, never opens the breaker every workspace shares.
     */
    checking?: boolean;
  },
) => PaymentsClient;

export interface TenantsDeps {
  /** What the assembly built once for every installation (./tenant.ts). */
  common: Common;
  installations: Installations;
  paymentsFor: PaymentsFor;
  /** `/balance connect`: the modal that connects or replaces the key, whether connected or not. */
  connect: (args: CommandArgs) => Promise<void>;
  /** The installation's bot token for background work, refreshed if it expires soon; undefined when revoked. */
  tokenFor: (installation: InstallationSummary) => Promise<string | undefined>;
  /** The App Home of an installation without a payment account: the account alone. */
  publishAccountHome: (
    client: webApi.WebClient,
    installation: InstallationSummary,
    userId: string,
  ) => Promise<void>;
  /** Installations kept at once (2,000 by default, about 7 KB each: bench/weight.ts); the least recently used goes first. */
  max?: number;
}

/** A part no longer used: its payments client lets go of the breaker every client shares. */
const retire = (part: Part) => part.row?.payments.close?.();

/** Installations kept in memory at once by default (about 7 KB each: bench/weight.ts). */
export const KEPT_INSTALLATIONS = 2000;

/** Which account an installation's key is: when it was connected, or 'none'. */
const accountOf = (installation: InstallationSummary) => String(installation.account?.connectedAt ?? 'none');

/**
 * What is kept of an installation between requests, and what it was built from (a new key, or a
 * rotated token, builds it again): its row, not its handlers, watches or feeds, which are made
 * from it for each request or check (`served`).
 */
interface Part {
  version: string;
  /** When the account whose key it holds was connected: 'none' while none is. */
  account: string;
  installation: InstallationSummary;
  token: string;
  /** Its token, key's client, rules and people (./tenant.ts); undefined while no account is connected. */
  row: Installation | undefined;
}

/**
 * Many workspaces: each request's installation, resolved once at the edge into its own
 * `ListenerDeps` — its payments client (its API key, its single-flight, its health), its access
 * rules (its workspace or organisation, its people), its poster and directory (its bot token),
 * its log lines tagged with it, its watches and feeds — and the handlers built on them. Nothing in one installation's
 * deps can reach another's key, token or answers. The most recently used `max` installations
 * are kept, each as its row (`Part`); a replaced key or a rotated token builds it again.
 */
export function createTenants(deps: TenantsDeps) {
  const { max = KEPT_INSTALLATIONS } = deps;
  const tenants = new Map<InstallationId, Promise<Part>>();
  const { clock, logger } = deps.common;
  /** Background work's resolutions of each installation's token: which sealing of it, and when. */
  const resolved = new Map<InstallationId, { sealing: string | undefined; at: number }>();
  /** Whether the token last resolved for the installation is still the one to use: see TOKEN_KEPT_MS. */
  const stillResolved = (installation: InstallationSummary) => {
    const last = resolved.get(installation.id);
    if (!last || last.sealing === undefined || last.sealing !== installation.tokenSealing) return false;
    const { tokenExpiresAt } = installation;
    const rotatesSoon = tokenExpiresAt !== undefined && tokenExpiresAt - clock() < ROTATION_WINDOW_MS;
    return !rotatesSoon || clock() - last.at < TOKEN_KEPT_MS;
  };

  async function build(installation: InstallationSummary, token: string, version: string): Promise<Part> {
    const { id, account } = installation;
    const { common } = deps;
    const built = { version, account: accountOf(installation), installation, token };
    const apiKey = account && (await deps.installations.paymentKeyOf(id));
    if (!apiKey) return { ...built, row: undefined };
    const health = createHealth(common.breaker);
    const payments = deps.paymentsFor(apiKey, {
      installation: id,
      timeoutMs: common.settings.payments.timeoutMs,
      onCall: (report) => health.record(report),
    });
    const logger = common.logger.child({ installation: id });
    const state = serviceState(common.store, logger, {
      installation: id,
      circuit: () => common.breaker.state(),
      account: account?.connectedAt,
    });
    const row: Installation = {
      id,
      token,
      payments,
      health,
      state,
      // Its feeds go to its private channels: nobody lists people or channels for a workspace of many.
      policy: { home: installation.home, listable: false },
      directory: common.directoryOf(id, token),
      account: account?.connectedAt,
      moreHome: async (client, userId) =>
        paymentAccountBlocks({
          installerId: installation.installerUserId,
          account,
          canManage: await mayManage(client(), installation, userId),
        }),
    };
    return { ...built, row };
  }

  /** An installation's part for one request or check, made from what is kept of it. */
  function served(part: Part): Tenant {
    const { common } = deps;
    const { installation, token, row } = part;
    if (row) {
      const tenant = buildTenant(common, row);
      return lazily<Tenant>({
        handlers: () => withConnect(tenant.handlers),
        deps: () => tenant.deps,
        watches: () => tenant.watches,
        checker: () => tenant.checker,
        feed: () => tenant.feed,
        poster: () => tenant.poster,
      });
    }
    const { id } = installation;
    return lazily<Tenant>({
      handlers: () =>
        withConnect(
          notConnectedHandlers(
            ownPipeline(common.shared, id),
            installation.installerUserId,
            ({ client, event }) => deps.publishAccountHome(client, installation, event.user),
          ),
        ),
      deps: () => undefined,
      watches: () => undefined,
      checker: () => undefined,
      feed: () => undefined,
      poster: () => common.slackOf(id, token).poster,
    });
  }

  /** `/balance connect` opens the modal, whether the account is connected yet or not. */
  function withConnect(handlers: Handlers): Handlers {
    const connect = (args: CommandArgs) =>
      args.command.text.trim().toLowerCase() === 'connect'
        ? deps.connect(args)
        : handlers.command['/balance'](args);
    return lazily<Handlers>({
      command: () => lazily({ '/balance': () => connect, '/invoice': () => handlers.command['/invoice'] }),
      action: () => handlers.action,
      shortcut: () => handlers.shortcut,
      event: () => handlers.event,
      function: () => handlers.function,
      view: () => handlers.view,
    });
  }

  function tenantOf(installation: InstallationSummary, token: string): Promise<Part> {
    // The token is part of the version: a rotated one builds clients that use it.
    const version = `${accountOf(installation)}:${token}`;
    const { id } = installation;
    let tenant = tenants.get(id);
    tenants.delete(id);
    if (tenant) {
      const kept = tenant;
      tenant = kept.then((t) => {
        if (t.version === version) return t;
        retire(t);
        return build(installation, token, version);
      });
    } else {
      tenant = build(installation, token, version);
    }
    tenants.set(id, tenant);
    // A build that failed (the store, just then) is not kept.
    tenant.catch(() => {
      if (tenants.get(id) === tenant) tenants.delete(id);
    });
    const [oldest] = tenants.keys();
    if (tenants.size > max && oldest !== undefined) forget(oldest);
    return tenant;
  }

  const tokenOf = (context: Context) => {
    if (!context.botToken) throw new Error('the request was authorized without a bot token');
    return context.botToken;
  };

  /**
   * An installation's part for background work, by id, with its token from `deps.tokenFor`
   * (refreshed as requests' are); undefined when it cannot be served (uninstalled, its token
   * revoked, the store failing just then: its work waits and is tried again). `known` is its
   * summary as the caller read it moments ago (one read of many installations): given, it is
   * not read again.
   */
  async function partOf(id: InstallationId, known?: InstallationSummary): Promise<Tenant | undefined> {
    try {
      const installation = known ?? (await deps.installations.summaryOf(id));
      if (!installation) {
        forget(id);
        return undefined;
      }
      // The installation's part as it is now (a request may have rebuilt it with a rotated
      // token), while it holds the account the installation has now.
      const kept = tenants.get(id);
      if (kept && stillResolved(installation)) {
        const part = await kept;
        if (part.account === accountOf(installation)) return served(part);
      }
      const token = await deps.tokenFor(installation);
      if (!token) return undefined;
      const part = await tenantOf(installation, token);
      resolved.set(id, { sealing: installation.tokenSealing, at: clock() });
      return served(part);
    } catch (error) {
      logger.warn({ err: error, installation: id }, 'could not serve an installation’s background work');
      return undefined;
    }
  }

  /** Forgets an installation's part (uninstalled, or the least recently used): nothing of it stays in memory. */
  function forget(id: InstallationId) {
    tenants
      .get(id)
      ?.then(retire)
      .catch(() => undefined);
    tenants.delete(id);
    resolved.delete(id);
  }

  return {
    /** The handlers of the request's installation (put in the context by `authorize`). */
    handlersOf: async (context: Context): Promise<Handlers> =>
      served(await tenantOf(installationOf(context), tokenOf(context))).handlers,

    /** Publishes a person's App Home as their installation shows it now (after connecting, say). */
    async publishHome(
      context: Context,
      installation: InstallationSummary,
      client: webApi.WebClient,
      userId: string,
    ) {
      const tenant = served(await tenantOf(installation, tokenOf(context)));
      if (tenant.deps) await publishHome(tenant.deps, client, userId);
      else await deps.publishAccountHome(client, installation, userId);
    },

    partOf,

    forget,

    /** How many installations are kept, for the tests. */
    get size() {
      return tenants.size;
    },
  };
}
