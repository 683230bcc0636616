import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import {
  type BlockAction,
  type ButtonAction,
  type RespondArguments,
  type SlackCommandMiddlewareArgs,
  type SlackEventMiddlewareArgs,
  type SlashCommand,
  webApi,
} from '@slack/bolt';
import { Pool } from 'undici';
import type { AccessPolicy, Directory, Membership } from '../../src/access.js';
import { Inflight } from '../../src/inflight.js';
import { buildTenant, type Common, sharedListenerDeps } from '../../src/installations/tenant.js';
import type { ButtonArgs } from '../../src/listeners/actions/click.js';
import type { ListenerDeps } from '../../src/listeners/deps.js';
import type { UnfurlClient } from '../../src/listeners/events/link-shared.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { CircuitBreaker, createHealth, createPaymentsClient } from '../../src/payments/index.js';
import { Pacer } from '../../src/payments/pacer.js';
import type { Sandbox } from '../../src/sandbox/server.js';
import { serviceState } from '../../src/service-state.js';
import { type ResponseUrlClient, ResponseUrlError } from '../../src/slack/response-url.js';
import type { Store } from '../../src/store/database.js';
import { ONE_WORKSPACE } from '../../src/store/keys.js';
import type { WatchSettings } from '../../src/watches/service.js';
import { NOW } from './factories.js';
import type { RecordingPoster } from './fake-slack.js';

/** Typed stand-ins for the arguments Bolt gives listeners, recording what the listener does. */

export const HOME_TEAM = 'T0HOME';

type AckArg = string | RespondArguments | undefined;

interface Recorder {
  acks: AckArg[];
  responses: RespondArguments[];
  /** Views published through Bolt's client (a click in the App Home publishes it again). */
  published: webApi.ViewsPublishArguments[];
  /** Milliseconds from the call to the ack. */
  ackMs?: number;
}

interface RecorderOptions {
  /** Every respond() rejects, as an expired response_url does. */
  failRespond?: boolean;
  /** ack() rejects, as it does when a Socket Mode connection has closed. */
  failAck?: boolean;
}

/** The recorders of the response_urls handed out, by URL, for `recordingResponseUrls`. */
const byResponseUrl = new Map<string, { rec: Recorder; fail: boolean }>();

/** A response_url client that records each post in the recorder of the request it belongs to. */
export const recordingResponseUrls: ResponseUrlClient = {
  async post(url, message) {
    const target = byResponseUrl.get(url);
    if (!target) throw new ResponseUrlError(`unknown response_url ${url}`, 404, undefined);
    if (target.fail) throw new ResponseUrlError('the response_url answered HTTP 404', 404, undefined);
    target.rec.responses.push(message);
  },
};

function recorder({ failRespond = false, failAck = false }: RecorderOptions = {}) {
  const rec: Recorder = { acks: [], responses: [], published: [] };
  const started = performance.now();
  const ack = async (response?: AckArg) => {
    rec.ackMs = performance.now() - started;
    if (failAck) throw new Error('socket closed');
    rec.acks.push(response);
  };
  const responseUrl = `https://hooks.slack.test/${randomUUID()}`;
  byResponseUrl.set(responseUrl, { rec, fail: failRespond });
  const respond = async () => {
    throw new Error('listeners post through ListenerDeps.responseUrls, not Bolt’s respond()');
  };
  return { rec, ack, respond, responseUrl };
}

export function commandArgs(overrides: Partial<SlashCommand> = {}, opts: RecorderOptions = {}) {
  const { rec, ack, respond, responseUrl } = recorder(opts);
  const command: SlashCommand = {
    token: 'deprecated-verification-token',
    command: '/invoice',
    text: '',
    response_url: responseUrl,
    trigger_id: '1.2.3',
    user_id: 'U0ASKER',
    user_name: 'asker',
    team_id: HOME_TEAM,
    team_domain: 'home',
    channel_id: 'C0SUPPORT',
    channel_name: 'support',
    api_app_id: 'A0APP',
    is_enterprise_install: 'false',
    ...overrides,
  };
  const args: SlackCommandMiddlewareArgs = {
    command,
    body: command,
    payload: command,
    ack,
    respond,
    say: async () => ({ ok: true }),
  };
  return { args, rec };
}

export function buttonArgs(value: string, opts: RecorderOptions & { actionId?: string } = {}) {
  const { rec, ack, respond, responseUrl } = recorder(opts);
  const action: ButtonAction = {
    type: 'button',
    action_id: opts.actionId ?? 'refresh_invoice',
    block_id: 'invoice_actions',
    value,
    text: { type: 'plain_text', text: 'Refresh' },
    action_ts: '1700000000.000100',
  };
  const body: BlockAction<ButtonAction> = {
    type: 'block_actions',
    actions: [action],
    team: { id: HOME_TEAM, domain: 'home' },
    user: { id: 'U0CLICKER', username: 'clicker', team_id: HOME_TEAM },
    channel: { id: 'C0SUPPORT', name: 'support' },
    message: { type: 'message', ts: '1700000000.000100', text: 'x' },
    container: { type: 'message', message_ts: '1700000000.000100' },
    response_url: responseUrl,
    trigger_id: '1.2.3',
    api_app_id: 'A0APP',
    token: 'deprecated',
  };
  const args: ButtonArgs = {
    action,
    body,
    payload: action,
    ack: () => ack(),
    respond,
    say: async () => ({ ok: true }),
    client: { views: { publish: async (view) => void rec.published.push(view) } },
  };
  return { args, rec };
}

export function linkSharedArgs(
  urls: string[],
  opts: { unfurlId?: string; source?: string; failUnfurl?: boolean; eventId?: string } = {},
): {
  args: SlackEventMiddlewareArgs<'link_shared'> & { client: UnfurlClient };
  unfurls: webApi.ChatUnfurlArguments[];
} {
  const event = {
    type: 'link_shared' as const,
    channel: 'C0SUPPORT',
    is_bot_user_member: true,
    user: 'U0PASTER',
    message_ts: '1700000000.000200',
    links: urls.map((url) => ({ domain: new URL(url).hostname, url })),
    event_ts: '1700000000.000200',
    ...(opts.unfurlId ? { unfurl_id: opts.unfurlId } : {}),
    ...(opts.source ? { source: opts.source } : {}),
  };
  const unfurls: webApi.ChatUnfurlArguments[] = [];
  const client: UnfurlClient = {
    chat: {
      unfurl: async (args) => {
        if (opts.failUnfurl) throw new Error('An API error occurred: cannot_unfurl_url');
        unfurls.push(args);
        return { ok: true };
      },
    },
  };
  return {
    args: {
      event,
      payload: event,
      body: eventBody(event, opts.eventId),
      say: async () => ({ ok: true }),
      client,
    },
    unfurls,
  };
}

/** The envelope Slack sends an event of HOME_TEAM in (`body` of Bolt's event arguments); a fresh id unless one is given. */
export const eventBody = <E>(event: E, eventId?: string) => ({
  token: 't',
  team_id: HOME_TEAM,
  api_app_id: 'A0APP',
  event,
  type: 'event_callback' as const,
  event_id: eventId ?? `Ev${randomUUID()}`,
  event_time: 1700000000,
  authorizations: [],
});

/** Log lines written by a logger, parsed. */
export function captureLogs(secrets: string[] = []): {
  logger: Logger;
  lines: Record<string, unknown>[];
  raw: string[];
} {
  const raw: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      raw.push(String(chunk));
      done();
    },
  });
  const logger = createLogger({ level: 'debug', secrets, destination });
  return {
    logger,
    raw,
    get lines() {
      return raw
        .flatMap((r) => r.split('\n').filter(Boolean))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    },
  };
}

export interface DepsOptions {
  fastPathMs?: number;
  invoiceReply?: ListenerDeps['invoiceReply'];
  payUrl?: URL;
  policy?: Partial<AccessPolicy>;
  /** What Slack's directory (users.info) says of these people; anyone else is a member of HOME_TEAM. */
  people?: Readonly<Record<string, Membership | undefined>>;
  /**
   * users.info fails for everyone (Slack down, or the users:read scope missing before a
   * reinstall); `after_first`: it answers the first ask about a person (the access check) and
   * fails the later ones (a time-zone read).
   */
  directoryFails?: boolean | 'after_first';
  logger?: Logger;
  settings?: Partial<WatchSettings>;
  /** Milliseconds since the epoch; NOW by default. */
  clock?: () => number;
  /** The payment client's deadline per call; 2 s by default. */
  paymentTimeoutMs?: number;
}

export const TEST_WATCH_SETTINGS: WatchSettings = {
  pollSeconds: 30,
  graceMinutes: 60,
  maxDays: 7,
  limitPerChannel: 100,
};

/**
 * Listener dependencies built the way the bot builds every installation's (`buildTenant`), wired
 * to a real payments client talking HTTP to `sandbox`, a store and a fake Slack.
 */
export function listenerDeps(
  sandbox: Sandbox,
  store: Store,
  poster: RecordingPoster,
  opts: DepsOptions = {},
) {
  const pool = new Pool(sandbox.url);
  const logger = opts.logger ?? captureLogs().logger;
  const clock = opts.clock ?? (() => NOW.getTime());
  const breaker = new CircuitBreaker();
  const health = createHealth(breaker, clock);
  const payments = createPaymentsClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.apiKey,
    dispatcher: pool,
    userAgent: 'test',
    timeoutMs: opts.paymentTimeoutMs ?? 2000,
    retry: { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 20 },
    background: { dispatcher: pool, pace: new Pacer(1000).take },
    onCall: (report) => health.record(report),
    breaker,
  });
  const people = opts.people ?? {};
  const answered = new Set<string>();
  const directory: Directory = async (userId) => {
    const fails = opts.directoryFails === 'after_first' ? answered.has(userId) : opts.directoryFails;
    if (fails) throw new Error('An API error occurred: missing_scope');
    answered.add(userId);
    return Object.hasOwn(people, userId) ? people[userId] : { teamId: HOME_TEAM, enterpriseId: undefined };
  };
  const base = {
    settings: {
      invoiceReply: opts.invoiceReply ?? 'in_channel',
      watches: { ...TEST_WATCH_SETTINGS, ...opts.settings },
      balancePollSeconds: 60,
      payments: { payUrl: opts.payUrl ?? new URL(sandbox.payUrl), timeoutMs: opts.paymentTimeoutMs ?? 2000 },
    },
    logger,
    store,
    metrics: { request: () => undefined, slackCall: () => undefined },
    inflight: new Inflight(),
    clock,
  } satisfies Partial<Common>;
  const tenant = buildTenant(
    {
      ...base,
      breaker,
      owner: 'test-instance',
      clientOptions: {},
      slackOf: () => ({ poster, client: () => new webApi.WebClient('xoxb-test') }),
      directoryOf: () => directory,
      wakeOutbox: () => undefined,
      shared: {
        ...sharedListenerDeps(base),
        fastPathMs: opts.fastPathMs ?? 1500,
        responseUrls: recordingResponseUrls,
      },
    },
    {
      id: ONE_WORKSPACE,
      token: 'xoxb-test',
      payments,
      health,
      state: serviceState(store, logger, { installation: ONE_WORKSPACE, circuit: () => breaker.state() }),
      directory,
      policy: { home: { teamId: HOME_TEAM, enterpriseId: undefined }, ...opts.policy },
    },
  );
  const deps = tenant.deps as ListenerDeps;
  return { deps, breaker, close: () => pool.close() };
}
