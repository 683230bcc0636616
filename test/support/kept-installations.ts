import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AllMiddlewareArgs } from '@slack/bolt';
import { Inflight } from '../../src/inflight.js';
import { createCommon } from '../../src/installations/tenant.js';
import { createTenants } from '../../src/installations/tenants.js';
import { createLogger } from '../../src/logger.js';
import { CircuitBreaker, createPaymentsClient, openConnections } from '../../src/payments/index.js';
import { openStore } from '../../src/store/database.js';
import type { InstallationSummary, Installations } from '../../src/store/installations.js';
import { type InstallationId, ONE_WORKSPACE } from '../../src/store/keys.js';
import { sharedPaces } from '../../src/store/pace.js';

/** A connected installation of the workspace `id`, its account connected at `connectedAt`. */
export const connectedInstallation = (id: InstallationId, connectedAt = 1): InstallationSummary => ({
  id,
  home: { teamId: id, enterpriseId: undefined },
  enterpriseInstall: false,
  installerUserId: `U0${id}`,
  account: { connectedBy: `U0${id}`, connectedAt },
  tokenExpiresAt: undefined,
  tokenSealing: 'seal-1',
  keyRejected: false,
});

/**
 * Many workspaces' installations as the bot keeps them (src/installations/tenants.ts), with
 * payments clients made as src/main.ts makes them (shared connections and breaker, each key's
 * background budget in the store), a store of their own, and `installations` as the store of
 * installations. Nothing is called unless a test asks. Used by bench/weight.ts too.
 */
export async function keptInstallations(opts: {
  serviceUrl: string;
  installations: Pick<Installations, 'summaryOf' | 'paymentKeyOf'>;
  max?: number;
}) {
  const dir = mkdtempSync(join(tmpdir(), 'kept-installations-'));
  const store = await openStore({ kind: 'sqlite', path: join(dir, 'bot.sqlite') });
  // As main.ts paces them: every key's budget in the store, reservations made together.
  const paces = sharedPaces(store, 5);
  const pools = openConnections({
    apiUrl: opts.serviceUrl,
    timeoutMs: 8000,
    concurrency: 32,
    background: { connections: 16, perKey: 4 },
    manyKeys: true,
  });
  const breaker = new CircuitBreaker();
  /** The keys a payments client was made for, in order. */
  const made: string[] = [];
  const tenants = createTenants({
    common: createCommon({
      settings: {
        invoiceReply: 'in_channel',
        watches: { pollSeconds: 30, graceMinutes: 60, maxDays: 7, limitPerChannel: 25 },
        balancePollSeconds: 60,
        payments: { payUrl: undefined, timeoutMs: 8000 },
      },
      logger: createLogger({ level: 'silent', secrets: [] }),
      store,
      metrics: { request: () => undefined, slackCall: () => undefined },
      breaker,
      inflight: new Inflight(),
      clock: Date.now,
      owner: 'kept-installations',
      clientOptions: { slackApiUrl: 'http://127.0.0.1:9/api/' },
      wakeOutbox: () => undefined,
    }),
    tokenFor: async (inst) => `xoxb-${inst.id}`,
    installations: opts.installations as Installations,
    paymentsFor: (apiKey, options) => {
      made.push(apiKey);
      return createPaymentsClient({
        baseUrl: opts.serviceUrl,
        apiKey,
        ...pools.interactive,
        timeoutMs: options.timeoutMs,
        background: { ...pools.background, pace: paces(options.installation ?? ONE_WORKSPACE) },
        breaker,
        userAgent: 'kept-installations',
        onCall: (report) => options.onCall?.(report),
      });
    },
    connect: async () => undefined,
    publishAccountHome: async () => undefined,
    ...(opts.max === undefined ? {} : { max: opts.max }),
  });
  return {
    tenants,
    made,
    /** A request of the installation: the handler of its /balance, made as a request makes it. */
    async request(installation: InstallationSummary) {
      const context = { installation, botToken: `xoxb-${installation.id}` };
      return (await tenants.handlersOf(context as unknown as AllMiddlewareArgs['context'])).command[
        '/balance'
      ];
    },
    /** A check of the installation's: its watches and feed, made as a check makes them. */
    async check(id: InstallationId, known?: InstallationSummary) {
      const part = await tenants.partOf(id, known);
      return part && [part.watches, part.feed];
    },
    async close() {
      await pools.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
