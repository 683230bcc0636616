import { type Context, webApi } from '@slack/bolt';
import { createAccess } from '../access.js';
import { createFeed, type Feed, type FeedDeps } from '../feed/service.js';
import type { ListenerDeps } from '../listeners/deps.js';
import { publishHome } from '../listeners/home.js';
import { type CommandArgs, createHandlers, type Handlers } from '../listeners/index.js';
import { notConnectedHandlers } from '../listeners/workspaces/not-connected.js';
import { installationOf, mayManage } from '../listeners/workspaces/payment-account.js';
import type { Metrics } from '../metrics.js';
import { type OutboxRow, outboxBacklog } from '../outbox.js';
import {
  type CallReport,
  type CircuitBreaker,
  createHealth,
  type PaymentsClient,
} from '../payments/index.js';
import { serviceState } from '../service-state.js';
import type { SlackMethod } from '../slack/calls.js';
import { createDirectory } from '../slack/people.js';
import { createSlackPoster, posterClient, type SlackPoster } from '../slack/poster.js';
import type { InstallationSummary, Installations } from '../store/installations.js';
import { eventKey } from '../store/keys.js';
import { paymentAccountBlocks } from '../views/installation.js';
import { createWatches, type WatchDeps, type Watches } from '../watches/service.js';

/**
 * How long background work keeps an installation's token without reading it again: a rotating
 * token is refreshed two hours before it expires. Its account is read every time (one row, no
 * secret opened): once a key change or an uninstall commits, no check or reading starts with
 * the key before it, on any instance.
 */
const TOKEN_KEPT_MS = 60_000;

/** A payments client for one key, sharing the service's breaker and connections with every other. */
export type PaymentsFor = (
  apiKey: string,
  options: {
    timeoutMs: number;
    onCall?: (report: CallReport) => void;
    /** Whose key it is: its metrics carry it, and its background calls keep the key's budget with every instance's. */
    installation?: string;
    /**
     * A key being checked before it is kept (the Connect modal): a breaker of its own, so that a
     * key that anyone may submit, answered slowly, never opens the breaker every workspace shares.
     */
    checking?: boolean;
  },
) => PaymentsClient;

/** What is the installation's own in `ListenerDeps`; the rest every installation shares. */
type Own =
  | 'logger'
  | 'payments'
  | 'access'
  | 'watches'
  | 'feed'
  | 'poster'
  | 'health'
  | 'keyRejectedSince'
  | 'keySource'
  | 'outboxBacklog'
  | 'firstSight'
  | 'moreHome';

export interface TenantsDeps {
  /** The request pipeline and settings every installation's listeners share. */
  shared: Omit<ListenerDeps, Own> & Pick<ListenerDeps, 'logger' | 'firstSight'>;
  /** What every installation's watches and feeds share: the store, this instance, the settings. */
  background: Pick<WatchDeps, 'store' | 'owner' | 'settings' | 'leaseMs' | 'wakeOutbox'> &
    Pick<FeedDeps, 'pollSeconds'> & {
      clock: () => number;
    };
  installations: Installations;
  paymentsFor: PaymentsFor;
  /** The payment service's deadline for a request's call. */
  timeoutMs: number;
  breaker: CircuitBreaker;
  metrics: Pick<Metrics, 'slackCall'>;
  /** Web API client options (SLACK_API_URL, deadlines, retries). */
  clientOptions: webApi.WebClientOptions;
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
  /** Installations kept at once (2,000 by default, about 48 KB each: bench/weight.ts); the least recently used goes first. */
  max?: number;
}

/** A part no longer used: its payments client lets go of the breaker every client shares. */
const retire = (tenant: Tenant) => tenant.deps?.payments.close?.();

/** Installations kept in memory at once by default (about 48 KB each: bench/weight.ts). */
export const KEPT_INSTALLATIONS = 2000;

/** Which account an installation's key is: when it was connected, or 'none'. */
const accountOf = (installation: InstallationSummary) => String(installation.account?.connectedAt ?? 'none');

/** One installation's part: its listeners' deps, its watches and feeds (when connected), and the handlers. */
interface Tenant {
  /** What the tenant was built from: a new key, or a rotated token, builds it again. */
  version: string;
  /** When the account whose key it holds was connected: 'none' while none is. */
  account: string;
  handlers: Handlers;
  deps: ListenerDeps | undefined;
  watches: Watches | undefined;
  feed: Feed | undefined;
  /** Posts as the installation's bot, for its watches' messages. */
  poster: SlackPoster;
}

/**
 * Many workspaces: each request's installation, resolved once at the edge into its own
 * `ListenerDeps` — its payments client (its API key, its single-flight, its health), its access
 * rules (its workspace or organisation, its people), its poster and directory (its bot token),
 * its log lines tagged with it, its watches and feeds — and the handlers built on them. Nothing in one installation's
 * deps can reach another's key, token or answers. The most recently used `max` installations
 * are kept; a replaced key or a rotated token builds the installation's part again.
 */
export function createTenants(deps: TenantsDeps) {
  const { max = KEPT_INSTALLATIONS } = deps;
  const tenants = new Map<string, Promise<Tenant>>();
  // One client posts for every installation, each call with the installation's token: a Web API
  // client is about 26 KB, most of what an installation's part would weigh.
  const posting = posterClient(undefined, deps.clientOptions);
  /** Background work's recent resolutions: a check does not read the installation and its token again each time. */
  const resolvedAt = new Map<string, number>();

  async function build(installation: InstallationSummary, token: string, version: string): Promise<Tenant> {
    const { id } = installation;
    const logger = deps.shared.logger.child({ installation: id });
    const onSlackCall = (method: SlackMethod, result: string) => deps.metrics.slackCall(method, result, id);
    // Its log lines and its metrics carry the installation.
    const metrics = deps.shared.metrics && {
      request: (...[kind, name, outcome, seconds]: Parameters<Metrics['request']>) =>
        deps.shared.metrics?.request(kind, name, outcome, seconds, id),
      slackCall: onSlackCall,
    };
    const shared = { ...deps.shared, logger, ...(metrics ? { metrics } : {}) };
    const poster = createSlackPoster(posting, onSlackCall, token);
    const apiKey = installation.account && (await deps.installations.paymentKeyOf(id));
    if (!apiKey) {
      const handlers = notConnectedHandlers(shared, installation.installerUserId, ({ client, event }) =>
        deps.publishAccountHome(client, installation, event.user),
      );
      const none = { deps: undefined, watches: undefined, feed: undefined };
      return { version, account: accountOf(installation), handlers: withConnect(handlers), ...none, poster };
    }
    // Looking people up (with Slack's retries) is rare: its client is made the first time.
    let people: webApi.WebClient | undefined;
    const client = () => {
      people ??= new webApi.WebClient(token, deps.clientOptions);
      return people;
    };
    const health = createHealth(deps.breaker);
    const account = installation.account;
    const payments = deps.paymentsFor(apiKey, {
      installation: id,
      timeoutMs: deps.timeoutMs,
      onCall: (report) => health.record(report),
    });
    const { store, clock } = deps.background;
    const state = serviceState(store, logger, () => deps.breaker.state(), id, account?.connectedAt);
    const own = { installation: id, payments, poster, state, logger, clock };
    const watches = createWatches({ ...deps.background, ...own });
    // Its feeds go to its private channels: nobody lists channels for a workspace of many.
    const feed = createFeed({
      ...deps.background,
      ...own,
      account: account?.connectedAt,
      policy: { allowedChannels: undefined },
    });
    const tenantDeps: ListenerDeps = {
      ...shared,
      payments,
      access: createAccess(
        { home: installation.home, listable: false },
        createDirectory(
          { users: { info: (args) => client().users.info(args) } },
          { onCall: (result) => onSlackCall('users.info', result) },
        ),
      ),
      watches,
      feed,
      poster,
      health,
      keyRejectedSince: () => state.keyRejectedSince(),
      keySource: state.keySource,
      outboxBacklog: () => outboxBacklog(store, id),
      firstSight: (key) => deps.shared.firstSight(eventKey(id, key)),
      moreHome: async (userId) =>
        paymentAccountBlocks({
          installerId: installation.installerUserId,
          account,
          canManage: await mayManage(client(), installation, userId),
        }),
    };
    const handlers = withConnect(createHandlers(tenantDeps));
    return { version, account: accountOf(installation), deps: tenantDeps, handlers, watches, feed, poster };
  }

  /** `/balance connect` opens the modal, whether the account is connected yet or not. */
  function withConnect(handlers: Handlers): Handlers {
    const balance = handlers.command['/balance'];
    const connect = (args: CommandArgs) =>
      args.command.text.trim().toLowerCase() === 'connect' ? deps.connect(args) : balance(args);
    return { ...handlers, command: { ...handlers.command, '/balance': connect } };
  }

  function tenantOf(installation: InstallationSummary, token: string): Promise<Tenant> {
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
    if (tenants.size > max) {
      forget(tenants.keys().next().value as string);
    }
    return tenant;
  }

  const tokenOf = (context: Context) => {
    if (!context.botToken) throw new Error('the request was authorized without a bot token');
    return context.botToken;
  };

  /**
   * An installation's part for background work, by id, with its token from `deps.tokenFor`
   * (refreshed as requests' are); undefined when it cannot be served (uninstalled, its token
   * revoked, the store failing just then: its work waits and is tried again).
   */
  async function backgroundOf(id: string): Promise<Tenant | undefined> {
    try {
      const installation = await deps.installations.summaryOf(id);
      if (!installation) {
        forget(id);
        return undefined;
      }
      // The installation's part as it is now (a request may have rebuilt it with a rotated
      // token), while it holds the account the installation has now.
      const kept = tenants.get(id);
      const at = resolvedAt.get(id);
      if (kept && at !== undefined && deps.background.clock() - at < TOKEN_KEPT_MS) {
        const tenant = await kept;
        if (tenant.account === accountOf(installation)) return tenant;
      }
      const token = await deps.tokenFor(installation);
      const tenant = installation && token ? await tenantOf(installation, token) : undefined;
      if (tenant) resolvedAt.set(id, deps.background.clock());
      return tenant;
    } catch (error) {
      deps.shared.logger.warn(
        { err: error, installation: id },
        'could not serve an installation’s background work',
      );
      return undefined;
    }
  }

  /**
   * Whether an installation's background work may call the service now: while the service
   * rejects its key, one check or reading a minute, all instances together; the rest wait
   * ("cannot be served now") without a call.
   */
  async function mayCall(id: string): Promise<boolean> {
    const { store, clock } = deps.background;
    try {
      return await serviceState(store, deps.shared.logger, undefined, id).mayProbe(clock());
    } catch (error) {
      deps.shared.logger.warn(
        { err: error, installation: id },
        'could not serve an installation’s background work',
      );
      return false;
    }
  }

  /** Forgets an installation's part (uninstalled, or the least recently used): nothing of it stays in memory. */
  function forget(id: string) {
    tenants
      .get(id)
      ?.then(retire)
      .catch(() => undefined);
    tenants.delete(id);
    resolvedAt.delete(id);
  }

  return {
    /** The handlers of the request's installation (put in the context by `authorize`). */
    handlersOf: async (context: Context): Promise<Handlers> =>
      (await tenantOf(installationOf(context), tokenOf(context))).handlers,

    /** Publishes a person's App Home as their installation shows it now (after connecting, say). */
    async publishHome(
      context: Context,
      installation: InstallationSummary,
      client: webApi.WebClient,
      userId: string,
    ) {
      const tenant = await tenantOf(installation, tokenOf(context));
      if (tenant.deps) await publishHome(tenant.deps, client, userId);
      else await deps.publishAccountHome(client, installation, userId);
    },

    /** An installation's watches, for the poll job; undefined while it cannot be served. */
    watchesOf: async (id: string) => ((await mayCall(id)) ? (await backgroundOf(id))?.watches : undefined),

    /** An installation's feeds, for the feed's jobs; undefined while it cannot be served. */
    feedOf: async (id: string) => ((await mayCall(id)) ? (await backgroundOf(id))?.feed : undefined),

    /** An installation's bot, for the outbox; undefined while it cannot be served. */
    posterOf: async (id: string) => (await backgroundOf(id))?.poster,

    /**
     * Whether a message may still go out (asked by the outbox just before): a feed's message only
     * while its feed runs and its channel may still receive it; a message of an installation that
     * cannot be served now is left for the outbox to postpone, and one of a feed whose account
     * was disconnected since is not sent.
     */
    async mayDeliver(row: OutboxRow): Promise<boolean> {
      if (!row.subscription_id) return true;
      const tenant = await backgroundOf(row.installation_id);
      if (!tenant) return true;
      return tenant.feed ? tenant.feed.mayDeliver(row) : false;
    },

    forget,

    /** How many installations are kept, for the tests. */
    get size() {
      return tenants.size;
    },
  };
}

export type Tenants = ReturnType<typeof createTenants>;
