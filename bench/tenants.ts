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
 * 5), BENCH_TENANT_POLL_SECONDS (WATCH_POLL_SECONDS, default 30), BENCH_NODE_ARGS (the
 * instances' node options, as for the commands scenario).
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { openStore, type Store } from '../src/store/database.js';
import { createSealer } from '../src/store/sealing.js';
import { type BotProcess, SECRETS, startBot } from '../test/e2e/harness.js';
import { freshDatabase, startPostgres } from '../test/support/postgres-server.js';
import { type SlackStandIn, startSlackStandIn } from '../test/support/slack-stand-in.js';
import { botNodeArgs, cpuMs, percentile, round, rssMb, type Sandbox } from './lib.js';
import {
  announcements,
  type Change,
  healthy,
  type KeyRate,
  overdue,
  serviceRates,
  statementsOf,
} from './tenants-measures.js';
import { keepCards, populate, spreadChecks, type Tenant, tenantsOf } from './tenants-population.js';

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
  perCheck: PerCheck;
  /**
   * The same from `warmSeconds` on: every instance has by then served each installation once
   * (read its row, opened its token and key, made its clients), as a process does once in its life.
   */
  warm: PerCheck & { warmSeconds: number };
}

interface PerCheck {
  checks: number;
  cpuMs: number;
  statements: number;
}

/** What the instances have spent, at one moment: CPU (ms) and statements, each instance's. */
async function spentOf(bots: BotProcess[]) {
  return {
    cpu: bots.map((b) => cpuMs(b.child.pid)),
    statements: await Promise.all(bots.map((b) => statementsOf(b.url))),
  };
}

const sum = (after: number[], before: number[]) => after.reduce((n, a, i) => n + a - (before[i] ?? 0), 0);

/** What each check cost between two moments. */
const perCheckOf = (checks: number, before: Spent, after: Spent): PerCheck => ({
  checks,
  cpuMs: round(sum(after.cpu, before.cpu) / checks, 2),
  statements: round(sum(after.statements, before.statements) / checks, 2),
});

type Spent = Awaited<ReturnType<typeof spentOf>>;

/**
 * When the warm measure starts: two poll intervals, and at least a minute, after the instances
 * started (a third of the run at most). Each check of an installation goes to any instance, so
 * by then each instance has served nearly every installation once.
 */
const warmMsOf = (settings: TenantSettings) =>
  Math.min(Math.max(60_000, 2 * settings.pollSeconds * 1000), (settings.minutes * 60_000) / 3);

const log = (message: string) => console.error(`[tenants] ${new Date().toISOString()} ${message}`);

/** What each instance runs with: the one PostgreSQL store, the sandbox, the Slack stand-in, the scenario's cadence and budget. */
function botEnv(
  settings: TenantSettings,
  urls: { slackApiUrl: string; sandbox: Sandbox; databaseUrl: string },
  key: Buffer,
): Record<string, string> {
  return {
    SLACK_CLIENT_ID: '1111.2222',
    SLACK_CLIENT_SECRET: randomBytes(16).toString('hex'),
    SLACK_STATE_SECRET: randomBytes(16).toString('hex'),
    SLACK_SIGNING_SECRET: SECRETS.signingSecret,
    ENCRYPTION_KEY: key.toString('base64'),
    SLACK_API_URL: urls.slackApiUrl,
    PAYMENT_API_URL: urls.sandbox.url,
    PAYMENT_PAY_URL: urls.sandbox.payUrl,
    DATABASE_URL: urls.databaseUrl,
    WATCH_POLL_SECONDS: String(settings.pollSeconds),
    PAYMENT_API_BACKGROUND_RPS: String(settings.backgroundRps),
    LOG_LEVEL: 'info',
  };
}

/**
 * Changes invoices of small installations at random moments, after the first check of
 * everything and early enough to be seen; each watch's invoice at most once (`taken`: their threads).
 */
async function changeInvoices(
  sandbox: Sandbox,
  small: Tenant[],
  settings: TenantSettings,
  window: { started: number; runMs: number },
): Promise<{ changed: Change[]; taken: Set<string> }> {
  const { started, runMs } = window;
  const firstAt = Math.min(settings.pollSeconds * 1000, runMs / 4);
  const lastAt = Math.max(firstAt, runMs - Math.min(runMs / 2, 2 * settings.pollSeconds * 1000 + 10_000));
  const moments = Array.from(
    { length: settings.changes },
    () => started + firstAt + Math.random() * (lastAt - firstAt),
  ).sort((a, b) => a - b);
  const changed: Change[] = [];
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
  return { changed, taken };
}

/** The instances running with their installations, from `started` on. */
interface Run {
  settings: TenantSettings;
  sandbox: Sandbox;
  store: Store;
  slack: SlackStandIn;
  bots: BotProcess[];
  tenants: { small: Tenant[]; big: Tenant };
  started: number;
  setupSeconds: number;
}

/** Changes invoices while the instances run, for the scenario's minutes, and measures what they did. */
async function measureRun(run: Run): Promise<TenantScenarioResult> {
  const { settings, sandbox, store, slack, bots, started } = run;
  const loadAverage = loadavg().map((l) => round(l, 2));
  const before = await spentOf(bots);
  const warmMs = warmMsOf(settings);
  const warming = sleep(Math.max(0, started + warmMs - Date.now())).then(() => spentOf(bots));
  const callsBefore = (await sandbox.calls('/api/v2/invoice/')).length;
  const peakRss = bots.map(() => 0);
  const sampler = setInterval(() => {
    bots.forEach((b, i) => {
      peakRss[i] = Math.max(peakRss[i] ?? 0, rssMb(b.child.pid));
    });
  }, 1000);

  const runMs = settings.minutes * 60_000;
  const { changed, taken } = await changeInvoices(sandbox, run.tenants.small, settings, { started, runMs });
  log(`${changed.length} invoices changed; running to the end`);
  while (Date.now() < started + runMs) await sleep(500);
  const ended = Date.now();
  clearInterval(sampler);
  const after = await spentOf(bots);
  const warm = await warming;
  const overdueAtEnd = await overdue(store, ended);
  const seconds = (ended - started) / 1000;

  // Delay: the change → the first thread post in its watch's thread.
  const { delays, duplicates, spuriousPosts } = announcements(slack, changed, taken);
  const calls = await sandbox.calls('/api/v2/invoice/');
  const checks = calls.length - callsBefore;
  const warmChecks = calls.filter(([at]) => at >= started + warmMs).length;
  return {
    settings,
    loadAverage,
    setupSeconds: run.setupSeconds,
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
    service: serviceRates(calls, run.tenants, seconds, settings.backgroundRps),
    overdueAtEnd,
    perCheck: perCheckOf(checks, before, after),
    warm: { ...perCheckOf(warmChecks, warm, after), warmSeconds: warmMs / 1000 },
    instances: bots.map((b, i) => {
      const cpu = ((after.cpu[i] ?? 0) - (before.cpu[i] ?? 0)) / 1000;
      return {
        cpuSeconds: round(cpu),
        cpuPercent: round((100 * cpu) / seconds),
        peakRssMb: peakRss[i] ?? 0,
        warnings: b.logs().filter((l) => Number(l.level) >= 40).length,
      };
    }),
  };
}

export async function tenantScenario(
  sandbox: Sandbox,
  settings: TenantSettings = tenantSettings(),
): Promise<TenantScenarioResult> {
  const setupStarted = Date.now();
  const tenants = tenantsOf(settings);
  const all = [...tenants.small, tenants.big];
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
      keepCards(slack, all);
      const env = botEnv(settings, { slackApiUrl: slack.apiUrl, sandbox, databaseUrl }, key);
      await spreadChecks(store, settings.pollSeconds);
      await sandbox.reset();
      const setupSeconds = round((Date.now() - setupStarted) / 1000);
      log(`setup took ${setupSeconds} s; starting ${settings.instances} instances`);
      const started = Date.now();
      // BENCH_CPU_PROF=<dir>: each instance writes a V8 CPU profile there as it stops.
      const prof = process.env.BENCH_CPU_PROF;
      const nodeArgs = [...botNodeArgs, ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [])];
      bots.push(
        ...(await Promise.all(Array.from({ length: settings.instances }, () => startBot(env, { nodeArgs })))),
      );
      await Promise.all(bots.map((b) => healthy(b.url)));
      return await measureRun({ settings, sandbox, store, slack, bots, tenants, started, setupSeconds });
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
    [
      `… from ${r.warm.warmSeconds} s on: checks, CPU (ms) and statements per check`,
      `${r.warm.checks}, ${r.warm.cpuMs}, ${r.warm.statements}`,
      '≤ 0.5 ms',
    ],
    ['small key: calls per second, average', r.service.smallKeys.averagePerKey, ''],
    ['small keys: most calls in a clock second (any key)', r.service.smallKeys.maxPerSecond, `≤ ${budget}`],
    ['small keys: most calls in any 1,000 ms (any key)', r.service.smallKeys.maxSliding, ''],
    ['small keys with a second over the budget', r.service.smallKeys.overBudget, '0'],
    ['small keys with any 1,000 ms over the budget', r.service.smallKeys.slidingOver, '0'],
    ['big key: calls per second, average', r.service.bigKey.average, `≤ ${budget}`],
    ['big key: most calls in a clock second', r.service.bigKey.maxPerSecond, `≤ ${budget}`],
    ['big key: most calls in any 1,000 ms', r.service.bigKey.maxSliding, ''],
    ['big key: 1,000 ms windows over the budget', r.service.bigKey.slidingOver, '0'],
    [
      `big key: shortest time holding ${budget + 1} calls (ms; the gaps between them)`,
      `${r.service.bigKey.shortestSpanMs} (${r.service.bigKey.shortestGapsMs.join(', ')})`,
      '≥ 1000',
    ],
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
