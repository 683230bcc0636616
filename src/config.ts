import { type Mode, SETTING_NAMES, type SettingName, settingOf, type Values } from './config/settings.js';
import type { LOG_LEVELS } from './config/values.js';
import type { Visibility } from './domain/visibility.js';
import type { DatabaseLocation } from './store/location.js';
import type { SealingKeys } from './store/sealing.js';

export { PLACEHOLDERS } from './config/values.js';

/**
 * The bot's configuration, read once at start from the environment (after `.env`, via dotenv)
 * into a frozen, typed object that is passed down. Every setting is declared once, in
 * ./config/settings.ts; this file reads them for the mode the environment chooses. Errors name
 * the variable and what is wrong with it, never its value: several of these are secrets.
 */

/** How Slack reaches the bot: signed HTTP requests, or a Socket Mode WebSocket the bot opens. */
export type SlackConnection = { mode: 'http'; signingSecret: string } | { mode: 'socket'; appToken: string };

export interface Config {
  slack: SlackConnection & {
    botToken: string;
    apiUrl: string;
  };
  /** Where the bot listens: Slack's requests (HTTP mode), /healthz and /metrics (both modes). */
  http: {
    port: number;
    /** The interface to listen on; all of them when unset. */
    host: string | undefined;
    /** METRICS_PORT: `/metrics` on this port alone, not on `port`; unset, on `port`. */
    metricsPort: number | undefined;
  };
  payments: {
    apiUrl: string;
    apiKey: string;
    /** The `{pay_url}` of payment links, for pasted links and unfurls; any host when unset. */
    payUrl: URL | undefined;
    timeoutMs: number;
    /** Calls to the service at once; more wait their turn. */
    concurrency: number;
  };
  access: {
    balanceUsers: readonly string[] | undefined;
    balanceChannels: readonly string[] | undefined;
  };
  invoiceReply: Visibility;
  logLevel: LogLevel;
  database: DatabaseLocation;
  watches: {
    /** Seconds between checks of a watched invoice in its first 30 minutes. */
    pollSeconds: number;
    /** Minutes a watch goes on after its invoice's expiry, for late payments. */
    graceMinutes: number;
    /** Days after which a watch ends whatever happens. */
    maxDays: number;
    /** Active watches allowed in one channel. */
    limitPerChannel: number;
  };
  /** Calls per second that background work (watches, the feed) may make to the payment service. */
  backgroundRps: number;
  /** Seconds between readings of the balance for the payments feed. */
  balancePollSeconds: number;
  /** Days ended watches and feed subscriptions are kept before they are deleted. */
  endedRetentionDays: number;
}

/**
 * Many workspaces (README → Offer it to many workspaces): the app is installed with "Add to
 * Slack" and each workspace connects its own payment account, so there is no bot token and no
 * API key in the environment; tokens and keys are kept in the store, sealed with ENCRYPTION_KEY.
 */
export interface ManyWorkspacesConfig extends Omit<Config, 'slack' | 'payments' | 'access'> {
  slack: {
    mode: 'http';
    signingSecret: string;
    apiUrl: string;
    clientId: string;
    clientSecret: string;
    stateSecret: string;
  };
  payments: Omit<Config['payments'], 'apiKey'>;
  encryption: SealingKeys & { previous: Buffer | undefined };
}

/** A setting that is set but that the mode in use does not read: named at start, never silently ignored. */
interface Unread {
  setting: SettingName;
  message: string;
}

/** What every start knows besides its configuration: which mode, why, what to redact, what goes unread. */
interface Started {
  mode: Exclude<Mode, 'demo'>;
  /** Why this mode, in the words of the first log line. */
  why: string;
  /** Every secret value the settings hold, in every spelling a log line could hold it in. */
  secrets: readonly string[];
  unread: readonly Unread[];
}

/** The two ways to run, chosen by which variables are set. */
export type Setup = Started &
  ({ tenancy: 'one'; config: Config } | { tenancy: 'many'; config: ManyWorkspacesConfig });

export type LogLevel = (typeof LOG_LEVELS)[number];

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

const MODE_NAMES: Record<Mode, string> = {
  http: 'one workspace over HTTP',
  socket: 'one workspace over Socket Mode',
  many: 'many workspaces',
  demo: 'the local demo',
};

/** Unset and empty are the same everywhere: `FOO=` in a .env file means "not set". */
const given = (env: NodeJS.ProcessEnv, name: string): string | undefined => {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value;
};

/**
 * Which settings, set, a mode does not read: each refused (by name, with why) when setting it
 * there can only be a mistake, otherwise named in a warning.
 */
export function unreadSettings(env: NodeJS.ProcessEnv, mode: Mode): { refused: string[]; unread: Unread[] } {
  const refused: string[] = [];
  const unread: Unread[] = [];
  for (const name of SETTING_NAMES) {
    const setting = settingOf(name);
    if (setting.reads.includes(mode) || given(env, name) === undefined) continue;
    const refusal = setting.refused?.[mode];
    if (refusal) refused.push(`${name}: ${refusal}`);
    else {
      const hint = setting.unreadHint?.[mode];
      const what = `${name} is set, but ${MODE_NAMES[mode]} does not read it: unset it`;
      unread.push({ setting: name, message: hint ? `${what}; ${hint}` : what });
    }
  }
  return { refused, unread };
}

/** Every setting the mode reads, checked: values (defaults for the unset), secrets, and every problem. */
function readSettings(env: NodeJS.ProcessEnv, mode: Exclude<Mode, 'demo'>) {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  const secrets: string[] = [];
  for (const name of SETTING_NAMES) {
    const setting = settingOf(name);
    if (!setting.reads.includes(mode)) continue;
    const raw = given(env, name);
    if (raw === undefined) {
      if (setting.required) problems.push(`${name}: ${setting.whenMissing?.[mode] ?? 'is required'}`);
      values[name] = setting.default;
      continue;
    }
    // Our own messages only: zod's defaults could echo a value, and some of these are secrets.
    const parsed = setting.value.safeParse(raw);
    if (!parsed.success) {
      problems.push(...parsed.error.issues.map((issue) => `${name}: ${issue.message}`));
      continue;
    }
    values[name] = parsed.data;
    if (setting.secret)
      secrets.push(...(setting.secret === true ? [String(parsed.data)] : setting.secret(parsed.data)));
  }
  const { refused, unread } = unreadSettings(env, mode);
  problems.push(...refused);
  if (values.METRICS_PORT !== undefined && values.METRICS_PORT === values.PORT)
    problems.push(
      'METRICS_PORT: must not be PORT: the two are servers of their own. Choose another port, or unset METRICS_PORT to serve /metrics on PORT',
    );
  if (problems.length > 0) throw new ConfigError(problems);
  const { DATABASE_URL: database } = values as Values;
  if (database.kind === 'sqlite' && given(env, 'DATABASE_POOL_SIZE') !== undefined)
    unread.push({
      setting: 'DATABASE_POOL_SIZE',
      message:
        'DATABASE_POOL_SIZE is set, but a SQLite store does not read it (it sizes PostgreSQL’s pool): unset it',
    });
  return { values: values as Values, secrets, unread };
}

const deepFreeze = <T>(value: T): T => {
  if (value && typeof value === 'object' && !(value instanceof URL) && !Buffer.isBuffer(value)) {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
};

/** A required setting's value: readSettings has refused its absence already. */
function present<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('a required setting was read without being checked');
  return value;
}

const set = (env: NodeJS.ProcessEnv, name: SettingName) => given(env, name) !== undefined;

/**
 * Many workspaces when an OAuth client id is set; one workspace when it is not, over Socket Mode
 * when an app-level token is set, otherwise over HTTP; refused, naming both, when a bot token and
 * a client id are set together.
 */
export function loadSetup(env: NodeJS.ProcessEnv): Setup {
  // Both ways at once is a switch half made: which one was meant is not the bot's guess.
  if (set(env, 'SLACK_BOT_TOKEN') && set(env, 'SLACK_CLIENT_ID'))
    throw new ConfigError([
      'SLACK_BOT_TOKEN and SLACK_CLIENT_ID are both set: SLACK_BOT_TOKEN runs the bot for one workspace, SLACK_CLIENT_ID for many through Add to Slack. Leave one of the two empty (README → Configuration).',
    ]);
  if (!set(env, 'SLACK_CLIENT_ID')) return { tenancy: 'one', ...oneWorkspace(env) };
  const { values: v, secrets, unread } = readSettings(env, 'many');
  const config: ManyWorkspacesConfig = {
    ...common(v),
    slack: {
      mode: 'http',
      signingSecret: present(v.SLACK_SIGNING_SECRET),
      apiUrl: slackApiUrl(v.SLACK_API_URL),
      clientId: present(v.SLACK_CLIENT_ID),
      clientSecret: present(v.SLACK_CLIENT_SECRET),
      stateSecret: present(v.SLACK_STATE_SECRET),
    },
    encryption: { current: present(v.ENCRYPTION_KEY), previous: v.ENCRYPTION_KEY_PREVIOUS },
  };
  const why = `${MODE_NAMES.many} through Add to Slack, because SLACK_CLIENT_ID is set`;
  return { tenancy: 'many', mode: 'many', why, secrets, unread, config: deepFreeze(config) };
}

function oneWorkspace(env: NodeJS.ProcessEnv): Started & { config: Config } {
  const mode = set(env, 'SLACK_APP_TOKEN') ? 'socket' : 'http';
  const { values: v, secrets, unread } = readSettings(env, mode);
  const shared = common(v);
  const connection: SlackConnection =
    mode === 'socket'
      ? { mode, appToken: present(v.SLACK_APP_TOKEN) }
      : { mode, signingSecret: present(v.SLACK_SIGNING_SECRET) };
  const config: Config = {
    ...shared,
    slack: { ...connection, botToken: present(v.SLACK_BOT_TOKEN), apiUrl: slackApiUrl(v.SLACK_API_URL) },
    payments: { ...shared.payments, apiKey: present(v.PAYMENT_API_KEY) },
    access: { balanceUsers: v.BALANCE_ALLOWED_USERS, balanceChannels: v.BALANCE_ALLOWED_CHANNELS },
  };
  const why =
    mode === 'socket'
      ? `${MODE_NAMES.socket}, because SLACK_APP_TOKEN is set`
      : `${MODE_NAMES.http}, because SLACK_BOT_TOKEN is set and SLACK_APP_TOKEN is not`;
  return { mode, why, secrets, unread, config: deepFreeze(config) };
}

/** One workspace's configuration, as `loadSetup` reads it when no SLACK_CLIENT_ID is set. */
export function loadConfig(env: NodeJS.ProcessEnv): Config {
  return oneWorkspace(env).config;
}

const slackApiUrl = (url: string) => (url.endsWith('/') ? url : `${url}/`);

/** What both tenancies read alike. */
function common(v: Values): Omit<ManyWorkspacesConfig, 'slack' | 'encryption'> {
  return {
    http: { port: v.PORT, host: v.HOST, metricsPort: v.METRICS_PORT },
    payments: {
      apiUrl: present(v.PAYMENT_API_URL),
      payUrl: v.PAYMENT_PAY_URL,
      timeoutMs: v.PAYMENT_API_TIMEOUT_MS,
      concurrency: v.PAYMENT_API_CONCURRENCY,
    },
    invoiceReply: v.INVOICE_REPLY,
    logLevel: v.LOG_LEVEL,
    database:
      v.DATABASE_URL.kind === 'postgres'
        ? { ...v.DATABASE_URL, poolSize: v.DATABASE_POOL_SIZE }
        : v.DATABASE_URL,
    watches: {
      pollSeconds: v.WATCH_POLL_SECONDS,
      graceMinutes: v.WATCH_GRACE_MINUTES,
      maxDays: v.WATCH_MAX_DAYS,
      limitPerChannel: v.WATCH_LIMIT_PER_CHANNEL,
    },
    backgroundRps: v.PAYMENT_API_BACKGROUND_RPS,
    balancePollSeconds: v.BALANCE_POLL_SECONDS,
    endedRetentionDays: v.ENDED_RETENTION_DAYS,
  };
}
