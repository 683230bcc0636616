/**
 * The tenants scenario of `npm run bench` (issue 19): many workspaces on one PostgreSQL store,
 * served by three instances at once. 1,000 small installations with 10 watches each and one big
 * installation with 5,000, every one with its own payment key (its own merchant in the sandbox,
 * answering in 20 ms) and its own bot token. While the instances run, invoices of small
 * installations change at random moments; it measures the delay from each change to the thread
 * post that announces it (at the Slack stand-in), the calls each key makes to the service per
 * second against the background budget (PAYMENT_API_BACKGROUND_RPS, which each instance keeps
 * per key), and each instance's CPU and RSS.
 *
 * Not in the default scenarios: it starts the embedded PostgreSQL (test/support/postgres-server.ts; set
 * TEST_DATABASE_URL to use a running server instead) and takes minutes.
 *
 * Options (environment): BENCH_TENANTS (small installations, default 1000), BENCH_TENANT_WATCHES
 * (watches each, default 10), BENCH_BIG_WATCHES (the big installation's, default 5000),
 * BENCH_TENANT_INSTANCES (default 3), BENCH_TENANT_MINUTES (default 3), BENCH_TENANT_CHANGES
 * (invoice changes over the run, default 200), BENCH_TENANT_RPS (the background budget, default
 * 5), BENCH_TENANT_POLL_SECONDS (WATCH_POLL_SECONDS, default 30).
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Installation } from '@slack/bolt';
import { parse as parseJson, stringify } from 'lossless-json';
import { request } from 'undici';
import { invoiceSchema } from '../src/payments/schemas.js';
import { demoInvoices } from '../src/sandbox/data.js';
import { openStore, type Store } from '../src/store/database.js';
import { createInstallations } from '../src/store/installations.js';
import { type InstallationId, installationId } from '../src/store/keys.js';
import { prepareSealing } from '../src/store/rotation.js';
import { createSealer } from '../src/store/sealing.js';
import { toSnapshot } from '../src/watches/snapshot.js';
import { type BotProcess, SECRETS, startBot } from '../test/e2e/harness.js';
import { freshDatabase, startPostgres } from '../test/support/postgres-server.js';
import { type SlackStandIn, startSlackStandIn } from '../test/support/slack-stand-in.js';
import { cpuMs, percentile, round, rssMb, type Sandbox, type SandboxCall } from './lib.js';

export interface TenantSettings {
  tenants: number;
  watchesEach: number;
  bigWatches: number;
  instances: number;
  minutes: number;
  changes: number;
  backgroundRps: number;
  pollSeconds: number;
}

export const tenantSettings = (env: NodeJS.ProcessEnv = process.env): TenantSettings => ({
  tenants: Number(env.BENCH_TENANTS ?? 1000),
  watchesEach: Number(env.BENCH_TENANT_WATCHES ?? 10),
  bigWatches: Number(env.BENCH_BIG_WATCHES ?? 5000),
  instances: Number(env.BENCH_TENANT_INSTANCES ?? 3),
  minutes: Number(env.BENCH_TENANT_MINUTES ?? 3),
  changes: Number(env.BENCH_TENANT_CHANGES ?? 200),
  backgroundRps: Number(env.BENCH_TENANT_RPS ?? 5),
  pollSeconds: Number(env.BENCH_TENANT_POLL_SECONDS ?? 30),
});

interface KeyRate {
  calls: number;
  /** Calls over the run's seconds. */
  average: number;
  /** The most calls in one second of the clock (1 s buckets). */
  maxPerSecond: number;
  /** The most calls in any 1,000 ms (a sliding window: stricter, timer jitter included). */
  maxSliding: number;
  /** Calls that end a 1,000 ms window holding more than the budget. */
  slidingOver: number;
  /** The shortest time from a call to the budget-th after it (1,000 or more: never over the budget). */
  shortestSpanMs: number;
}

export interface TenantScenarioResult {
  settings: TenantSettings;
  /** The 1, 5 and 15-minute load averages when the instances started. */
  loadAverage: number[];
  setupSeconds: number;
  delayMs: { p50: number; p95: number; p99: number; max: number };
  changes: number;
  announced: number;
  /** Thread posts about watches whose invoice did not change (0: nothing announced twice or wrongly). */
  spuriousPosts: number;
  /** Changes announced more than once. */
  duplicates: number;
  service: {
    /** Calls to the service per second, all keys, over the run. */
    callsPerSecond: number;
    smallKeys: {
      keys: number;
      averagePerKey: number;
      maxPerSecond: number;
      maxSliding: number;
      /** Keys with a clock second above the budget. */
      overBudget: number;
      /** Keys with any 1,000 ms above the budget. */
      slidingOver: number;
    };
    bigKey: KeyRate;
  };
  /** Checks due more than 5 s ago but not made when the run ended, and the oldest's lateness. */
  overdueAtEnd: { small: number; big: number; oldestSmallSeconds: number; oldestBigSeconds: number };
  instances: { cpuSeconds: number; cpuPercent: number; peakRssMb: number; warnings: number }[];
  /** Watch checks made (the service's invoice calls), and what each cost: CPU of all instances, statements sent to the database. */
  perCheck: { checks: number; cpuMs: number; statements: number };
}

const BIG = installationId('TBIG00000');
const teamId = (i: number) => installationId(`T${String(i).padStart(8, '0')}`);
/** Invoice ids: the installation's number in the first group, the watch's in the last. */
const invoiceIdOf = (i: number, k: number) =>
  `${i.toString(16).padStart(8, '0')}-0000-4000-8000-${String(k).padStart(12, '0')}`;

interface Tenant {
  id: InstallationId;
  apiKey: string;
  botToken: string;
  /** Its watches: the invoice, and the card (its ts is the thread's) in `channel`. */
  watches: { invoiceId: string; channel: string; ts: string }[];
}

function tenantsOf(settings: TenantSettings): { small: Tenant[]; big: Tenant } {
  let seq = 0;
  const make = (id: InstallationId, index: number, count: number): Tenant => ({
    id,
    apiKey: `bench-key-${index}-${randomBytes(8).toString('hex')}`,
    botToken: `xoxb-bench-${index}-${randomBytes(8).toString('hex')}`,
    watches: Array.from({ length: count }, (_, k) => {
      seq += 1;
      return {
        invoiceId: invoiceIdOf(index, k),
        channel: `C${String(k % 5).padStart(8, '0')}`,
        ts: `1700000000.${String(seq).padStart(6, '0')}`,
      };
    }),
  });
  return {
    small: Array.from({ length: settings.tenants }, (_, i) => make(teamId(i), i, settings.watchesEach)),
    big: make(BIG, settings.tenants, settings.bigWatches),
  };
}

/** Installations with their keys connected, and their watches, as the bot stores them. */
async function populate(
  store: Store,
  sealer: ReturnType<typeof createSealer>,
  all: Tenant[],
  payUrl: string,
) {
  const now = Date.now();
  await prepareSealing(store, sealer, now);
  const installations = createInstallations(store, sealer, () => now);
  for (let start = 0; start < all.length; start += 10) {
    await Promise.all(
      all.slice(start, start + 10).map(async (t) => {
        await installations.storeInstallation({
          team: { id: t.id },
          enterprise: undefined,
          isEnterpriseInstall: false,
          appId: 'A0APP',
          user: { id: 'U0INSTALLER', token: undefined, scopes: undefined },
          bot: {
            token: t.botToken,
            id: `B${t.id.slice(1)}`,
            userId: `U${t.id.slice(1)}`,
            scopes: ['chat:write', 'commands'],
          },
          tokenType: 'bot',
          authVersion: 'v2',
        } as Installation<'v2', false>);
        await installations.connectPaymentKey(t.id, t.apiKey, 'U0INSTALLER', now);
      }),
    );
  }
  // The snapshot as a check stores it, from the invoice the sandbox serves (bench/sandbox-worker.mjs).
  const template = { ...demoInvoices(payUrl)[0], timeout: '2099-01-01T00:00:00.000Z' };
  const snapshot = toSnapshot(invoiceSchema.parse(parseJson(stringify(template) ?? '')));
  const rows = all.flatMap((t) => t.watches.map((w) => ({ t, w })));
  for (let start = 0; start < rows.length; start += 500) {
    const batch = rows.slice(start, start + 500);
    await store.transaction(async (trx) => {
      await trx
        .insertInto('watches')
        .values(
          batch.map(({ t, w }) => ({
            id: `bench-${t.id}-${w.ts}`,
            installation_id: t.id,
            team_id: t.id,
            channel_id: w.channel,
            invoice_id: w.invoiceId,
            watcher_id: 'U0WATCHER',
            card_ts: w.ts,
            thread_ts: w.ts,
            state: 'active' as const,
            started_at: now,
            ends_at: now + 7 * 86_400_000,
            ended_at: null,
            end_reason: null,
          })),
        )
        .execute();
      await trx
        .insertInto('watched_invoices')
        .values(
          batch.map(({ t, w }) => ({
            installation_id: t.id,
            invoice_id: w.invoiceId,
            snapshot: JSON.stringify({ ...snapshot, id: w.invoiceId, link: `${payUrl}/pay/${w.invoiceId}` }),
            watched_since: now,
            next_poll_at: now,
            failures: 0,
            failing_since: null,
            lease_owner: null,
            lease_until: null,
          })),
        )
        .execute();
    });
  }
}

/** Just before the instances start: every watch young (the fast cadence), its checks spread over one interval. */
async function spreadChecks(store: Store, pollSeconds: number): Promise<void> {
  const now = Date.now();
  await store.db
    .updateTable('watched_invoices')
    .set((eb) => ({
      watched_since: now,
      next_poll_at: eb(
        eb.val(now),
        '+',
        eb.fn<number>('floor', [eb(eb.fn('random'), '*', pollSeconds * 1000)]),
      ),
    }))
    .execute();
  await store.db.updateTable('watches').set({ started_at: now }).execute();
}

async function overdue(store: Store, now: number) {
  const rows = await store.db
    .selectFrom('watched_invoices')
    .select((eb) => [
      eb.fn.countAll<string>().as('n'),
      eb.fn.min<number>('next_poll_at').as('oldest'),
      eb.case().when('installation_id', '=', BIG).then(1).else(0).end().as('big'),
    ])
    .where('next_poll_at', '<', now - 5000)
    .groupBy('big')
    .execute();
  const of = (big: number) => rows.find((r) => Number(r.big) === big);
  const late = (big: number) => {
    const oldest = of(big)?.oldest;
    return oldest === undefined || oldest === null ? 0 : round((now - Number(oldest)) / 1000);
  };
  return {
    small: Number(of(0)?.n ?? 0),
    big: Number(of(1)?.n ?? 0),
    oldestSmallSeconds: late(0),
    oldestBigSeconds: late(1),
  };
}

function rateOf(times: number[], seconds: number, budget: number): KeyRate {
  times.sort((a, b) => a - b);
  const buckets = new Map<number, number>();
  for (const t of times) buckets.set(Math.floor(t / 1000), (buckets.get(Math.floor(t / 1000)) ?? 0) + 1);
  let maxSliding = 0;
  let slidingOver = 0;
  for (let i = 0, j = 0; j < times.length; j += 1) {
    while ((times[j] as number) - (times[i] as number) >= 1000) i += 1;
    maxSliding = Math.max(maxSliding, j - i + 1);
    if (j - i + 1 > budget) slidingOver += 1;
  }
  return {
    calls: times.length,
    average: round(times.length / seconds, 2),
    maxPerSecond: Math.max(0, ...buckets.values()),
    maxSliding,
    slidingOver,
    shortestSpanMs: times.reduce(
      (min, t, i) => (i + budget < times.length ? Math.min(min, (times[i + budget] as number) - t) : min),
      Number.POSITIVE_INFINITY,
    ),
  };
}

async function healthy(url: string, timeoutMs = 30_000): Promise<void> {
  const started = Date.now();
  for (;;) {
    try {
      const response = await request(`${url}/healthz`, { reset: true });
      await response.body.dump();
      if (response.statusCode === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() - started > timeoutMs) throw new Error(`${url} was not healthy within ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** The statements an instance has sent to the database (its /metrics). */
async function statementsOf(url: string): Promise<number> {
  const response = await request(`${url}/metrics`, { reset: true });
  const text = await response.body.text();
  return Number(/^slackbot_db_statements_total (\d+)/m.exec(text)?.[1] ?? Number.NaN);
}

const log = (message: string) => console.error(`[tenants] ${new Date().toISOString()} ${message}`);

export async function tenantScenario(
  sandbox: Sandbox,
  settings: TenantSettings = tenantSettings(),
): Promise<TenantScenarioResult> {
  const setupStarted = Date.now();
  const { small, big } = tenantsOf(settings);
  const all = [...small, big];
  const postgres = await startPostgres();
  let slack: SlackStandIn | undefined;
  const bots: BotProcess[] = [];
  try {
    const databaseUrl = await freshDatabase(postgres.url);
    const key = randomBytes(32);
    const sealer = createSealer({ current: key });
    await sandbox.setLatency(20);
    await sandbox.addMerchants(
      all.map((t) => ({ apiKey: t.apiKey, invoiceIds: t.watches.map((w) => w.invoiceId) })),
    );
    const store = await openStore({ kind: 'postgres', url: databaseUrl });
    try {
      log(`populating ${all.length} installations, ${all.reduce((n, t) => n + t.watches.length, 0)} watches`);
      await populate(store, sealer, all, sandbox.payUrl);

      slack = await startSlackStandIn({ teamId: 'T0HOME', botToken: SECRETS.botToken });
      // The live cards the watches keep current: chat.update finds them.
      for (const t of all)
        for (const w of t.watches)
          slack.messages.push({
            channel: w.channel,
            ts: w.ts,
            threadTs: undefined,
            text: 'card',
            blocks: [],
            edits: [],
            deleted: false,
          });
      const env: Record<string, string> = {
        SLACK_CLIENT_ID: '1111.2222',
        SLACK_CLIENT_SECRET: randomBytes(16).toString('hex'),
        SLACK_STATE_SECRET: randomBytes(16).toString('hex'),
        SLACK_SIGNING_SECRET: SECRETS.signingSecret,
        ENCRYPTION_KEY: key.toString('base64'),
        SLACK_API_URL: slack.apiUrl,
        PAYMENT_API_URL: sandbox.url,
        PAYMENT_PAY_URL: sandbox.payUrl,
        DATABASE_URL: databaseUrl,
        WATCH_POLL_SECONDS: String(settings.pollSeconds),
        PAYMENT_API_BACKGROUND_RPS: String(settings.backgroundRps),
        LOG_LEVEL: 'info',
      };
      await spreadChecks(store, settings.pollSeconds);
      await sandbox.reset();
      const setupSeconds = round((Date.now() - setupStarted) / 1000);
      log(`setup took ${setupSeconds} s; starting ${settings.instances} instances`);
      const started = Date.now();
      // BENCH_CPU_PROF=<dir>: each instance writes a V8 CPU profile there as it stops.
      const prof = process.env.BENCH_CPU_PROF;
      const nodeArgs = prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [];
      bots.push(
        ...(await Promise.all(Array.from({ length: settings.instances }, () => startBot(env, { nodeArgs })))),
      );
      await Promise.all(bots.map((b) => healthy(b.url)));
      const loadAverage = loadavg().map((l) => round(l, 2));
      const cpuBefore = bots.map((b) => cpuMs(b.child.pid));
      const statementsBefore = await Promise.all(bots.map((b) => statementsOf(b.url)));
      const callsBefore = (await sandbox.calls('/api/v2/invoice/')).length;
      const peakRss = bots.map(() => 0);
      const sampler = setInterval(() => {
        bots.forEach((b, i) => {
          peakRss[i] = Math.max(peakRss[i] ?? 0, rssMb(b.child.pid));
        });
      }, 1000);

      // Changes at random moments, after the first check of everything and early enough to be seen.
      const runMs = settings.minutes * 60_000;
      const firstAt = Math.min(settings.pollSeconds * 1000, runMs / 4);
      const lastAt = Math.max(firstAt, runMs - Math.min(runMs / 2, 2 * settings.pollSeconds * 1000 + 10_000));
      const moments = Array.from(
        { length: settings.changes },
        () => started + firstAt + Math.random() * (lastAt - firstAt),
      ).sort((a, b) => a - b);
      const changed: { tenant: Tenant; watch: Tenant['watches'][number]; at: number }[] = [];
      const taken = new Set<string>();
      for (const moment of moments) {
        await sleep(Math.max(0, moment - Date.now()));
        let tenant: Tenant | undefined;
        let watch: Tenant['watches'][number] | undefined;
        do {
          tenant = small[Math.floor(Math.random() * small.length)];
          watch = tenant?.watches[Math.floor(Math.random() * tenant.watches.length)];
        } while (tenant && watch && taken.has(watch.ts) && taken.size < small.length * settings.watchesEach);
        if (!tenant || !watch || taken.has(watch.ts)) break;
        taken.add(watch.ts);
        await sandbox.updateMerchantInvoice(tenant.apiKey, watch.invoiceId, { payStatus: 'paid' });
        changed.push({ tenant, watch, at: Date.now() });
      }
      log(`${changed.length} invoices changed; running to the end`);
      while (Date.now() < started + runMs) await sleep(500);
      const ended = Date.now();
      clearInterval(sampler);
      const cpuAfter = bots.map((b) => cpuMs(b.child.pid));
      const statementsAfter = await Promise.all(bots.map((b) => statementsOf(b.url)));
      const overdueAtEnd = await overdue(store, ended);
      const seconds = (ended - started) / 1000;

      // Delay: the change → the first thread post in its watch's thread.
      const threadPosts = slack.calls.filter((c) => c.method === 'chat.postMessage' && c.args.thread_ts);
      const postsByThread = new Map<string, number[]>();
      for (const c of threadPosts) {
        const ts = String(c.args.thread_ts);
        const posts = postsByThread.get(ts) ?? [];
        posts.push(c.at);
        postsByThread.set(ts, posts);
      }
      const delays: number[] = [];
      let duplicates = 0;
      for (const c of changed) {
        const posts = (postsByThread.get(c.watch.ts) ?? []).filter((at) => at >= c.at);
        if (posts[0] !== undefined) delays.push(posts[0] - c.at);
        if (posts.length > 1) duplicates += 1;
      }
      const spuriousPosts = [...postsByThread.entries()]
        .filter(([ts]) => !taken.has(ts))
        .reduce((n, [, posts]) => n + posts.length, 0);

      // Calls per key.
      const calls: SandboxCall[] = await sandbox.calls('/api/v2/invoice/');
      const byKey = new Map<string, number[]>();
      for (const [at, authorization] of calls) {
        const times = byKey.get(authorization) ?? [];
        times.push(at);
        byKey.set(authorization, times);
      }
      const budget = settings.backgroundRps;
      const checks = calls.length - callsBefore;
      const sum = (after: number[], before: number[]) =>
        after.reduce((n, a, i) => n + a - (before[i] ?? 0), 0);
      const smallRates = small.map((t) => rateOf(byKey.get(`Token ${t.apiKey}`) ?? [], seconds, budget));
      const bigKey = rateOf(byKey.get(`Token ${big.apiKey}`) ?? [], seconds, budget);

      const result: TenantScenarioResult = {
        settings,
        loadAverage,
        setupSeconds,
        delayMs: {
          p50: round(percentile(delays, 0.5), 0),
          p95: round(percentile(delays, 0.95), 0),
          p99: round(percentile(delays, 0.99), 0),
          max: delays.length === 0 ? Number.NaN : Math.max(...delays),
        },
        changes: changed.length,
        announced: delays.length,
        spuriousPosts,
        duplicates,
        service: {
          callsPerSecond: round(calls.length / seconds, 1),
          smallKeys: {
            keys: small.length,
            averagePerKey: round(smallRates.reduce((n, r) => n + r.calls, 0) / small.length / seconds, 3),
            maxPerSecond: Math.max(0, ...smallRates.map((r) => r.maxPerSecond)),
            maxSliding: Math.max(0, ...smallRates.map((r) => r.maxSliding)),
            overBudget: smallRates.filter((r) => r.maxPerSecond > budget).length,
            slidingOver: smallRates.filter((r) => r.slidingOver > 0).length,
          },
          bigKey,
        },
        overdueAtEnd,
        perCheck: {
          checks,
          cpuMs: round(sum(cpuAfter, cpuBefore) / checks, 2),
          statements: round(sum(statementsAfter, statementsBefore) / checks, 2),
        },
        instances: bots.map((b, i) => {
          const cpu = ((cpuAfter[i] ?? 0) - (cpuBefore[i] ?? 0)) / 1000;
          return {
            cpuSeconds: round(cpu),
            cpuPercent: round((100 * cpu) / seconds),
            peakRssMb: peakRss[i] ?? 0,
            warnings: b.logs().filter((l) => Number(l.level) >= 40).length,
          };
        }),
      };
      return result;
    } finally {
      await Promise.all(bots.map((b) => b.stop()));
      await store.close();
    }
  } finally {
    await slack?.close();
    await postgres.stop();
  }
}

export function tenantTable(r: TenantScenarioResult): string {
  const s = r.settings;
  const budget = s.backgroundRps;
  const rows: [string, string | number, string][] = [
    ['installations (small + big)', `${s.tenants} + 1`, ''],
    ['watches (each small, the big one)', `${s.watchesEach}, ${s.bigWatches}`, ''],
    ['instances, minutes, poll interval (s)', `${s.instances}, ${s.minutes}, ${s.pollSeconds}`, ''],
    ['invoices changed / announced', `${r.changes} / ${r.announced}`, 'all'],
    // Of the changes announced before the end: one not announced waited longer than any of them.
    ['change → thread post p50 (ms)', r.delayMs.p50, ''],
    ['change → thread post p95 (ms)', r.delayMs.p95, ''],
    ['change → thread post p99 (ms)', r.delayMs.p99, `≈ poll interval (${s.pollSeconds * 1000})`],
    ['change → thread post max (ms)', r.delayMs.max, ''],
    [
      'changes announced twice / posts about unchanged invoices',
      `${r.duplicates} / ${r.spuriousPosts}`,
      '0 / 0',
    ],
    ['calls to the service per second, all keys', r.service.callsPerSecond, ''],
    ['watch checks made (service calls while measured)', r.perCheck.checks, ''],
    ['CPU per check, all instances (ms)', r.perCheck.cpuMs, '≤ 0.5'],
    ['SQL statements per check, all instances', r.perCheck.statements, '< 2'],
    ['small key: calls per second, average', r.service.smallKeys.averagePerKey, ''],
    ['small keys: most calls in a clock second (any key)', r.service.smallKeys.maxPerSecond, `≤ ${budget}`],
    ['small keys: most calls in any 1,000 ms (any key)', r.service.smallKeys.maxSliding, ''],
    ['small keys with a second over the budget', r.service.smallKeys.overBudget, '0'],
    ['small keys with any 1,000 ms over the budget', r.service.smallKeys.slidingOver, '0'],
    ['big key: calls per second, average', r.service.bigKey.average, `≤ ${budget}`],
    ['big key: most calls in a clock second', r.service.bigKey.maxPerSecond, `≤ ${budget}`],
    ['big key: most calls in any 1,000 ms', r.service.bigKey.maxSliding, ''],
    ['big key: 1,000 ms windows over the budget', r.service.bigKey.slidingOver, '0'],
    [`big key: shortest time holding ${budget + 1} calls (ms)`, r.service.bigKey.shortestSpanMs, '≥ 1000'],
    ['checks overdue > 5 s at the end, small / big', `${r.overdueAtEnd.small} / ${r.overdueAtEnd.big}`, ''],
    [
      '… the oldest, small / big (s)',
      `${r.overdueAtEnd.oldestSmallSeconds} / ${r.overdueAtEnd.oldestBigSeconds}`,
      '',
    ],
    ...r.instances.flatMap((p, i): [string, string | number, string][] => [
      [`instance ${i + 1}: CPU (s, % of a core)`, `${p.cpuSeconds} (${p.cpuPercent}%)`, ''],
      [`instance ${i + 1}: RSS, peak (MB)`, p.peakRssMb, ''],
      [`instance ${i + 1}: warnings and errors logged`, p.warnings, ''],
    ]),
  ];
  return [
    '| measure | value | target |',
    '|---|--:|---|',
    ...rows.map(([label, value, target]) => `| ${label} | ${value} | ${target} |`),
  ].join('\n');
}
