import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AllMiddlewareArgs, SlashCommand } from '@slack/bolt';
import { Pool } from 'undici';
import { afterAll, beforeAll } from 'vitest';
import { Inflight } from '../../src/inflight.js';
import { backgroundParts } from '../../src/installations/background.js';
import { createCommon } from '../../src/installations/tenant.js';
import { createTenants, type PaymentsFor, type TenantsDeps } from '../../src/installations/tenants.js';
import type { CommandArgs } from '../../src/listeners/args.js';
import { CircuitBreaker, createPaymentsClient, type PaymentsClient } from '../../src/payments/index.js';
import { num } from '../../src/sandbox/data.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { openStore, type Store } from '../../src/store/database.js';
import type { InstallationSummary, Installations } from '../../src/store/installations.js';
import { installationId } from '../../src/store/keys.js';
import { captureLogs, commandArgs, recordingResponseUrls, TEST_WATCH_SETTINGS } from './bolt.js';
import { withWatchesOf } from './jobs.js';
import { type SlackStandIn, startSlackStandIn } from './slack-stand-in.js';

/**
 * What the tests of the many-workspaces tenants (src/installations/tenants.ts) share: one sandbox
 * payment service with a second merchant (`OTHER_KEY`, holding Monero), one SQLite store and one
 * Slack stand-in per test file, and `tenants(keys)` building the tenants over them as
 * src/installations/many.ts does, recording what they make, close, log and count.
 */

export const OTHER_KEY = 'merchant-other-unit-key-1f2e3d';
const OTHER = { id: 'XMR', title: 'Monero', balance: num('77.7777') };

/** The installations most tests name. */
export const ID = {
  A: installationId('A'),
  B: installationId('B'),
  ONE: installationId('T0ONE'),
  BAD: installationId('T0BAD'),
};

/** The summary of the installation of workspace `id`, connected at `connectedAt` unless undefined. */
export const installation = (id: string, connectedAt?: number): InstallationSummary => ({
  id: installationId(id),
  home: { teamId: id, enterpriseId: undefined },
  enterpriseInstall: false,
  installerUserId: `U0${id}ADMIN`,
  account: connectedAt === undefined ? undefined : { connectedBy: `U0${id}ADMIN`, connectedAt },
  tokenExpiresAt: undefined,
  tokenSealing: 'seal-1',
  keyRejected: false,
});

export interface TenantsOptions {
  max?: number;
  /** What the store says of each installation (background work reads it); none by default. */
  summaries?: Record<string, InstallationSummary>;
  /** The token background work gets; `xoxb-<id>` by default. */
  tokenFor?: TenantsDeps['tokenFor'];
  clock?: () => number;
  /** Where the installations' Web API calls go; `anySlack` by default. */
  slackApiUrl?: string;
  /** The installations the store holds, instead of `keys` and `summaries`. */
  installations?: Installations;
  /** Payments clients with nothing to let go (no `close`), as `PaymentsClient` allows. */
  withoutClose?: boolean;
}

/** Payments clients over the sandbox; records the key of each made and the installation of each let go. */
function recordingPayments(sandbox: Sandbox, pool: Pool, withoutClose: boolean | undefined) {
  const made: string[] = [];
  /** The installations whose payments client was let go, in order. */
  const closed: string[] = [];
  const paymentsFor: PaymentsFor = (apiKey, options) => {
    made.push(apiKey);
    const client = createPaymentsClient({
      baseUrl: sandbox.url,
      apiKey,
      dispatcher: pool,
      userAgent: 'test',
      timeoutMs: options.timeoutMs,
      breaker: new CircuitBreaker(),
      ...(options.onCall ? { onCall: options.onCall } : {}),
    });
    const calls: PaymentsClient = {
      getBalance: (call) => client.getBalance(call),
      getInvoice: (id, call) => client.getInvoice(id, call),
    };
    if (withoutClose) return calls;
    return {
      ...calls,
      close: () => {
        closed.push(options.installation ?? '');
        client.close?.();
      },
    };
  };
  return { paymentsFor, made, closed };
}

/** Installations holding each one's key as `keys` says, and `summaries`; `failNextKey` makes the next key read throw. */
function fakeInstallations(
  keys: Record<string, string | undefined>,
  summaries: Record<string, InstallationSummary> | undefined,
) {
  let failNextKey = false;
  const installations = {
    async summaryOf(id: string) {
      return summaries?.[id];
    },
    async paymentKeyOf(id: string) {
      if (failNextKey) {
        failNextKey = false;
        throw new Error('the store is not answering');
      }
      return keys[id];
    },
  } as unknown as Installations;
  return {
    installations,
    failNextKey: () => {
      failNextKey = true;
    },
  };
}

/**
 * Starts the sandbox, the store and `anySlack` (where the installations' Web API calls go unless a
 * test says: users.info answers everyone a member) before the file's tests, closes them after.
 */
export function useTenantsWorld() {
  let sandbox: Sandbox | undefined;
  let pool: Pool | undefined;
  let store: Store | undefined;
  let anySlack: SlackStandIn | undefined;
  beforeAll(async () => {
    anySlack = await startSlackStandIn({ teamId: 'T0ANY', botToken: 'xoxb-any' });
    store = await openStore({
      kind: 'sqlite',
      path: join(mkdtempSync(join(tmpdir(), 'tenants-')), 'bot.sqlite'),
    });
    sandbox = await startSandbox();
    sandbox.addMerchant(OTHER_KEY, { balances: [OTHER], invoices: [] });
    pool = new Pool(sandbox.url);
  });
  afterAll(async () => {
    await anySlack?.close();
    await store?.close();
    await pool?.close();
    await sandbox?.close();
  });
  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the ${what} has not started`);
    return value;
  };
  const world = {
    get sandbox() {
      return need(sandbox, 'sandbox');
    },
    get store() {
      return need(store, 'store');
    },
    get anySlack() {
      return need(anySlack, 'Slack stand-in');
    },
    get pool() {
      return need(pool, 'pool');
    },
    /** Tenants over the sandbox, with each installation's key as `keys` says; records every client made. */
    tenants: (keys: Record<string, string | undefined>, opts: TenantsOptions = {}) =>
      tenantsOver(world, keys, opts),
  };
  return world;
}

function tenantsOver(
  world: { sandbox: Sandbox; store: Store; anySlack: SlackStandIn; pool: Pool },
  keys: Record<string, string | undefined>,
  opts: TenantsOptions,
) {
  const { sandbox, store } = world;
  const slackCalls: string[] = [];
  const requests: string[] = [];
  const seen: string[] = [];
  const connects: string[] = [];
  const homes: string[] = [];
  const logs = captureLogs([sandbox.apiKey, OTHER_KEY]);
  const { paymentsFor, made, closed } = recordingPayments(sandbox, world.pool, opts.withoutClose);
  const fake = fakeInstallations(keys, opts.summaries);
  const clock = opts.clock ?? Date.now;
  const common = createCommon({
    settings: {
      invoiceReply: 'in_channel',
      watches: TEST_WATCH_SETTINGS,
      balancePollSeconds: 60,
      payments: { payUrl: undefined, timeoutMs: 2000 },
    },
    logger: logs.logger,
    store,
    metrics: {
      request: (kind, name, outcome, _seconds, installation) => {
        requests.push(`${installation}:${kind}:${name}:${outcome}`);
      },
      slackCall: (method, result, installation) => {
        slackCalls.push(`${method}:${result}:${installation}`);
      },
    },
    breaker: new CircuitBreaker(),
    inflight: new Inflight(),
    clock,
    owner: 'test',
    clientOptions: {
      slackApiUrl: opts.slackApiUrl ?? world.anySlack.apiUrl,
      retryConfig: { retries: 0 },
    },
    wakeOutbox: () => undefined,
  });
  const deps: TenantsDeps = {
    common: {
      ...common,
      shared: {
        ...common.shared,
        responseUrls: recordingResponseUrls,
        firstSight: async (key) => {
          seen.push(key);
          return true;
        },
      },
    },
    tokenFor: opts.tokenFor ?? (async (inst) => `xoxb-${inst.id}`),
    installations: opts.installations ?? fake.installations,
    paymentsFor,
    connect: async (args) => {
      connects.push(args.command.user_id);
      await args.ack();
    },
    publishAccountHome: async (_client, inst, userId) => {
      homes.push(`${inst.id}:${userId}`);
    },
    ...(opts.max === undefined ? {} : { max: opts.max }),
  };
  const created = createTenants(deps);
  return {
    // Assigned, not spread: `size` stays a getter.
    tenants: Object.assign(
      created,
      withWatchesOf(
        backgroundParts(created, {
          store,
          logger: logs.logger,
          clock,
          settings: { watches: TEST_WATCH_SETTINGS },
        }),
      ),
    ),
    slackCalls,
    requests,
    seen,
    made,
    closed,
    connects,
    homes,
    logs,
    failNextKey: fake.failNextKey,
  };
}

type WorldTenants = ReturnType<typeof tenantsOver>['tenants'];

/** Runs a command through the installation's handlers; resolves with what the person sees. */
export async function ask(
  t: WorldTenants,
  inst: InstallationSummary,
  command: '/balance' | '/invoice',
  text: string,
  token = `xoxb-${inst.id}`,
  channel = 'C0SUPPORT',
) {
  const { args, rec } = commandArgs({
    command,
    text,
    team_id: inst.id,
    channel_id: channel,
  } as Partial<SlashCommand>);
  const context = { installation: inst, botToken: token } as unknown as AllMiddlewareArgs['context'];
  const handlers = await t.handlersOf(context);
  await handlers.command[command]({ ...args, context } as unknown as CommandArgs);
  return JSON.stringify([...rec.acks, ...rec.responses]);
}

export const balance = (t: WorldTenants, inst: InstallationSummary, text = '', token?: string) =>
  ask(t, inst, '/balance', text, token);
