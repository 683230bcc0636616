import { webApi } from '@slack/bolt';
import type { KnownBlock } from '@slack/types';
import { type Access, type AccessPolicy, createAccess, type Directory } from '../access.js';
import type { Config } from '../config.js';
import { createFeed, type Feed } from '../feed/service.js';
import type { Inflight } from '../inflight.js';
import type { ListenerDeps } from '../listeners/deps.js';
import { createHandlers, type Handlers } from '../listeners/index.js';
import { lazily } from '../listeners/lazily.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { outboxBacklog } from '../outbox.js';
import type { CircuitBreaker, Health, PaymentsClient } from '../payments/index.js';
import type { BackgroundDeps } from '../scheduler.js';
import type { ServiceState } from '../service-state.js';
import type { SlackMethod } from '../slack/calls.js';
import { createDirectory } from '../slack/people.js';
import { createSlackPoster, posterClient, type SlackPoster } from '../slack/poster.js';
import { createResponseUrlClient } from '../slack/response-url.js';
import type { Store } from '../store/database.js';
import { firstSight } from '../store/events.js';
import { homeCoins } from '../store/home-coins.js';
import { type InstallationId, ONE_WORKSPACE, seenKey } from '../store/keys.js';
import { createWatches, type InstallationChecker, type Watches, watchChecker } from '../watches/service.js';

/** Within Slack's 3 s: the reply rides in the ack if the service answers by then. */
const FAST_PATH_MS = 1500;
/** No call to Slack (Web API or response_url) may hang longer than this. */
const SLACK_HTTP_TIMEOUT_MS = 10_000;

/** Web API client options: SLACK_API_URL, a deadline per attempt, few retries. */
export function slackClientOptions(config: { slack: { apiUrl: string } }) {
  return {
    slackApiUrl: config.slack.apiUrl,
    // Each attempt's deadline (the SDK aborts the fetch): without it a call could wait forever.
    timeout: SLACK_HTTP_TIMEOUT_MS,
    // The SDK's default keeps retrying for 30 minutes; a chat.unfurl that late is worthless.
    retryConfig: { retries: 2, factor: 2, minTimeout: 500, maxTimeout: 2000 },
  };
}

/** The settings every installation is served with (the same in both tenancies). */
type ServedSettings = Pick<Config, 'invoiceReply' | 'watches' | 'balancePollSeconds'> & {
  payments: Pick<Config['payments'], 'payUrl' | 'timeoutMs'>;
};

/**
 * What the assembly builds once and every installation shares: the request pipeline, the
 * settings, the store, this instance, the one client that posts for every installation.
 */
export interface Common {
  settings: ServedSettings;
  logger: Logger;
  store: Store;
  metrics: Pick<Metrics, 'request' | 'slackCall'>;
  breaker: CircuitBreaker;
  inflight: Inflight;
  clock: () => number;
  /** This instance's name in leases. */
  owner: string;
  /** Web API client options, with Bolt's logger (SLACK_API_URL, deadlines, retries). */
  clientOptions: webApi.WebClientOptions;
  /** An installation's side of Slack, with its token, made for each use (`slackSides`; the tests give their stand-ins). */
  slackOf: (installation: InstallationId, token: string) => SlackSide;
  /** An installation's people, kept with it between requests (`slackSides`; the tests give their stand-ins). */
  directoryOf: (installation: InstallationId, token: string) => Directory;
  /** Asks the outbox to deliver now rather than at its next tick. */
  wakeOutbox: () => void;
  /** The request pipeline and settings every installation's listeners share (`sharedListenerDeps`). */
  shared: SharedListenerDeps;
}

/** What a listener gets whatever installation it serves: the request pipeline and the settings. */
export function sharedListenerDeps(
  common: Pick<Common, 'settings' | 'logger' | 'store' | 'metrics' | 'inflight' | 'clock'>,
) {
  const { clock, metrics, store, settings } = common;
  return {
    logger: common.logger,
    inflight: common.inflight,
    clock: () => new Date(clock()),
    fastPathMs: FAST_PATH_MS,
    responseUrls: createResponseUrlClient({
      timeoutMs: SLACK_HTTP_TIMEOUT_MS,
      onPost: (result) => metrics.slackCall('response_url', result),
    }),
    metrics,
    invoiceReply: settings.invoiceReply,
    payUrl: settings.payments.payUrl,
    maxWatchDays: settings.watches.maxDays,
    firstSight: (key: string) => firstSight(store, key, clock()),
  };
}

type SharedListenerDeps = ReturnType<typeof sharedListenerDeps>;

/** What every installation shares, built once: the shared listener deps and Slack sides made from the rest. */
export function createCommon(base: Omit<Common, 'shared' | 'slackOf' | 'directoryOf'>): Common {
  return { ...base, shared: sharedListenerDeps(base), ...slackSides(base) };
}

/**
 * One installation's own, what is kept of it between requests: its token, its key's client, its
 * rules and people, what all instances know of its key. Everything else is made from it per use.
 */
export interface Installation {
  /** Its id: `ONE_WORKSPACE` for the workspace set up from the environment. */
  id: InstallationId;
  token: string;
  payments: PaymentsClient;
  health: Health;
  state: ServiceState;
  /** Its workspace or organisation, and who may ask what where. */
  policy: AccessPolicy;
  /** Its people as Slack's directory answered them (`Common.directoryOf`). */
  directory: Directory;
  /** Many workspaces: when the account whose key `payments` holds was connected. */
  account?: number;
  /** More of the App Home for a person (the payment account), given a Web API client with its token. */
  moreHome?: (client: () => webApi.WebClient, userId: string) => Promise<KnownBlock[]>;
}

/**
 * One installation's part as a request or a check uses it: its listeners' deps and handlers, its
 * watches and feeds, its bot. Made from its `Installation` for that one use (`buildTenant`).
 */
export interface Tenant {
  handlers: Handlers;
  deps: ListenerDeps | undefined;
  watches: Watches | undefined;
  /** Its watches' background check alone: made for each claim, so only what a check needs. */
  checker: InstallationChecker | undefined;
  feed: Feed | undefined;
  /** Posts as the installation's bot, for its watches' and feeds' messages. */
  poster: SlackPoster;
}

/** What is the installation's own beside the shared deps: its log lines and metrics carry its id. */
export function ownPipeline(shared: SharedListenerDeps, id: InstallationId) {
  if (id === ONE_WORKSPACE) return shared;
  const { metrics } = shared;
  return {
    ...shared,
    logger: shared.logger.child({ installation: id }),
    metrics: {
      ...metrics,
      request: (...[kind, name, outcome, seconds]: Parameters<Metrics['request']>) =>
        metrics.request(kind, name, outcome, seconds, id),
      slackCall: (method: SlackMethod, result: string) => metrics.slackCall(method, result, id),
    },
  };
}

/** An installation's side of Slack for one use: its bot's posts, a Web API client with its token. */
interface SlackSide {
  poster: SlackPoster;
  /** Made the first time it is used (looking people up is rare). */
  client: () => webApi.WebClient;
}

/**
 * Each installation's side of Slack: one client posts for every installation, each call with the
 * installation's token (a Web API client is about 26 KB); its calls are counted as its own.
 */
function slackSides(common: Pick<Common, 'clientOptions' | 'metrics'>) {
  const posting = posterClient(undefined, common.clientOptions);
  const counted = (id: InstallationId) => (method: SlackMethod, result: string) =>
    common.metrics.slackCall(method, result, id);
  return {
    slackOf: (id: InstallationId, token: string): SlackSide => {
      let client: webApi.WebClient | undefined;
      return {
        poster: createSlackPoster(posting, counted(id), token),
        client: () => {
          client ??= new webApi.WebClient(token, common.clientOptions);
          return client;
        },
      };
    },
    directoryOf: (id: InstallationId, token: string): Directory => {
      const onCall = counted(id);
      return createDirectory(
        // A client of its token for each look-up (one a person an hour; about 55 µs to make), kept
        // by nobody: a 429 pauses that client's queue, never another installation's look-ups.
        { users: { info: (args) => new webApi.WebClient(token, common.clientOptions).users.info(args) } },
        { onCall: (result) => onCall('users.info', result) },
      );
    },
  };
}

/**
 * The one way an installation is served, whichever the tenancy: its `ListenerDeps` (its
 * payments client, its access rules and people, its poster, its log lines and metrics tagged
 * with it), its watches and feeds, and the handlers built on them, each made the first time the
 * use asks for it. Nothing in it can reach another installation's key, token or answers.
 */
export function buildTenant(common: Common, inst: Installation): Tenant {
  const { id, token, payments, state } = inst;
  const own = ownPipeline(common.shared, id);
  const { logger } = own;
  const { poster, client } = common.slackOf(id, token);
  const background: BackgroundDeps = {
    store: common.store,
    payments,
    poster,
    state,
    logger,
    clock: common.clock,
    wakeOutbox: common.wakeOutbox,
  };
  return lazily<Used>({
    poster: () => poster,
    access: () => createAccess(inst.policy, inst.directory),
    watches: () => createWatches({ ...background, installation: id, settings: common.settings.watches }),
    checker: () => watchChecker({ ...background, installation: id, settings: common.settings.watches }),
    feed: () =>
      createFeed({
        ...background,
        installation: id,
        ...(inst.account === undefined ? {} : { account: inst.account }),
        pollSeconds: common.settings.balancePollSeconds,
        policy: inst.policy,
      }),
    deps: (tenant) => listenerDeps(common, inst, own, { tenant, poster, client }),
    handlers: (tenant) => createHandlers(tenant.deps as ListenerDeps),
  });
}

/** A tenant as its deps see it: its access rules are made when first asked for, as its watches are. */
type Used = Tenant & { access: Access };

/** Where an installation's deps find the tenant they serve. */
const SERVES = Symbol('serves');

/**
 * The deps' access rules, watches and feed, each made the first time it is read (by the tenant
 * they serve, which keeps it for the rest of the use). Own properties, so a spread of the deps
 * copies them; their getters made once, not per request: an object literal with getters after a
 * spread took about 17 µs to make, most of what serving a request from the row cost.
 */
const MADE_ON_USE: PropertyDescriptorMap = {
  access: { enumerable: true, get: servedBy((t) => t.access) },
  watches: { enumerable: true, get: servedBy((t) => t.watches) },
  feed: { enumerable: true, get: servedBy((t) => t.feed) },
};

function servedBy(read: (tenant: Used) => unknown) {
  return function (this: { [SERVES]: Used }) {
    return read(this[SERVES]);
  };
}

/** The deps' getters over the tenant they serve (the rest is assigned after: `listenerDeps`). */
function madeOnUse(tenant: Used): Pick<ListenerDeps, 'access' | 'watches' | 'feed'> {
  const onUse = { [SERVES]: tenant } as { [SERVES]: Used } & Pick<
    ListenerDeps,
    'access' | 'watches' | 'feed'
  >;
  return Object.defineProperties(onUse, MADE_ON_USE);
}

/** An installation's `ListenerDeps` for one use, its watches and feed those of the tenant they serve. */
function listenerDeps(
  common: Common,
  inst: Installation,
  own: SharedListenerDeps,
  made: SlackSide & { tenant: Used },
): ListenerDeps {
  const { id, state, moreHome } = inst;
  const { client } = made;
  // The getters first, then the rest assigned: made the other way round (a literal, then its
  // getters), the object fell to a slow shape and took ten times as long to make.
  return Object.assign(madeOnUse(made.tenant), own, {
    installation: id,
    payments: inst.payments,
    poster: made.poster,
    health: inst.health,
    keyRejectedSince: () => state.keyRejectedSince(),
    keySource: state.keySource,
    outboxBacklog: () => outboxBacklog(common.store, id),
    firstSight: (key: string) => common.shared.firstSight(seenKey(id, key)),
    homeCoins: homeCoins(common.store, id),
    ...(moreHome ? { moreHome: (userId: string) => moreHome(client, userId) } : {}),
  });
}
