import { z } from 'zod';
import type { Visibility } from './domain/visibility.js';
import { CHANNEL_ID, USER_ID } from './slack-ids.js';
import { type DatabaseLocation, DEFAULT_POOL_SIZE } from './store/location.js';
import { parseEncryptionKey, type SealingKeys } from './store/sealing.js';

/**
 * The bot's configuration, read once at start from the environment (after `.env`, via dotenv)
 * into a frozen, typed object that is passed down. Errors name the variable and what is wrong
 * with it, never its value: several of these are secrets.
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
  /** Days an ended watch or feed is kept before it is deleted. */
  endedRetentionDays: number;
}

/**
 * Many workspaces (README → Offer it to many workspaces): the app is installed with "Add to
 * Slack" and each workspace connects its own payment account, so there is no bot token and no
 * API key in the environment; tokens and keys are kept in the store, sealed with ENCRYPTION_KEY.
 */
export interface ManyWorkspacesConfig extends Omit<Config, 'slack' | 'payments'> {
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

/** The two ways to run, chosen by which variables are set. */
export type Setup = { tenancy: 'one'; config: Config } | { tenancy: 'many'; config: ManyWorkspacesConfig };

/** The SQLite file used when DATABASE_URL is unset, relative to the working directory. */
const DEFAULT_SQLITE_PATH = './data/bot.sqlite';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** The values `.env.example` ships with: a copy left unedited is refused by name. */
export const PLACEHOLDERS: Readonly<Record<string, string>> = {
  SLACK_BOT_TOKEN: 'xoxb-...',
  SLACK_APP_TOKEN: 'xapp-...',
  PAYMENT_API_URL: 'https://api.your-payment-service.example',
  PAYMENT_PAY_URL: 'https://pay.your-payment-service.example',
};

/** Secrets shorter than this are refused: a one-character key would redact every log line to shreds. */
const MIN_SECRET_LENGTH = 8;

/** Unset and empty are the same everywhere: `FOO=` in a .env file means "not set". */
const blankIsUnset = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);
const optional = <T extends z.ZodType>(schema: T) => z.preprocess(blankIsUnset, schema.optional());
const required = <T extends z.ZodType>(schema: T) => z.preprocess(blankIsUnset, schema);

/** A string, trimmed, that is not the .env.example placeholder for `name`. */
const text = (name: string) =>
  z
    .string('is required')
    .trim()
    .refine((v) => v !== PLACEHOLDERS[name], {
      message: 'is still the placeholder from .env.example',
      abort: true,
    });

const secret = (name: string) =>
  text(name).refine((v) => v.length >= MIN_SECRET_LENGTH, {
    message: `must be at least ${MIN_SECRET_LENGTH} characters`,
    abort: true,
  });

const token = (name: string, prefix: string, what: string) =>
  secret(name).refine((v) => v.startsWith(prefix), `must be ${what} (${prefix}…)`);

const httpUrl = (name: string, what: string) =>
  text(name).refine(
    (v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol),
    `must be an http(s) URL (${what})`,
  );

/** A whole number written in digits only: `1e3`, `0x50` and `80.0` are refused. */
const whole = (min: number, max: number, what: string) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, { message: `must be ${what} (digits only)`, abort: true })
    .transform(Number)
    .refine((n) => n >= min && n <= max, `must be ${what} from ${min} to ${max}`);

const idList = (pattern: RegExp, what: string) =>
  z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((id) => id.trim())
        .filter(Boolean),
    )
    .refine((ids) => ids.length > 0, {
      message: 'holds no id: leave it unset to allow all',
      abort: true,
    })
    .refine((ids) => ids.every((id) => pattern.test(id)), `must be comma-separated ${what}`);

const schema = z.object({
  SLACK_BOT_TOKEN: required(token('SLACK_BOT_TOKEN', 'xoxb-', 'a bot token')),
  PORT: optional(whole(0, 65535, 'a port number')).default(3000),
  METRICS_PORT: optional(whole(1, 65535, 'a port number')),
  HOST: optional(
    z
      .string()
      .trim()
      .regex(/^[^\s/]+$/, 'must be a host name or an IP address'),
  ),
  SLACK_API_URL: optional(httpUrl('SLACK_API_URL', 'the Slack Web API base')).default(
    'https://slack.com/api/',
  ),
  PAYMENT_API_URL: required(httpUrl('PAYMENT_API_URL', 'the payment service base address')),
  PAYMENT_API_KEY: required(secret('PAYMENT_API_KEY')),
  PAYMENT_PAY_URL: optional(httpUrl('PAYMENT_PAY_URL', 'the origin of payment links')),
  PAYMENT_API_TIMEOUT_MS: optional(whole(100, 120_000, 'milliseconds')).default(8000),
  PAYMENT_API_CONCURRENCY: optional(whole(1, 256, 'a number of calls')).default(32),
  BALANCE_ALLOWED_USERS: optional(idList(USER_ID, 'Slack user ids (U…)')),
  BALANCE_ALLOWED_CHANNELS: optional(idList(CHANNEL_ID, 'Slack channel ids (C…, G…, D…)')),
  INVOICE_REPLY: optional(z.enum(['in_channel', 'ephemeral'], 'must be in_channel or ephemeral')).default(
    'in_channel',
  ),
  LOG_LEVEL: optional(z.enum(LOG_LEVELS, `must be one of ${LOG_LEVELS.join(', ')}`)).default('info'),
  DATABASE_URL: optional(
    z
      .string()
      .trim()
      .transform((v, ctx): DatabaseLocation => {
        if (/^postgres(ql)?:\/\//.test(v) && URL.canParse(v)) {
          const { password } = new URL(v);
          if (!password || decodeURIComponent(password).length >= MIN_SECRET_LENGTH)
            return { kind: 'postgres', url: v };
          ctx.issues.push({
            code: 'custom',
            message: `has a password shorter than ${MIN_SECRET_LENGTH} characters`,
            input: undefined,
          });
          return z.NEVER;
        }
        const path = /^file:(.+)$/.exec(v)?.[1];
        if (path) return { kind: 'sqlite', path };
        ctx.issues.push({
          code: 'custom',
          message: 'must be postgres://…, postgresql://… or file:<path>',
          input: undefined,
        });
        return z.NEVER;
      }),
  ).default({ kind: 'sqlite', path: DEFAULT_SQLITE_PATH }),
  DATABASE_POOL_SIZE: optional(whole(2, 200, 'connections')).default(DEFAULT_POOL_SIZE),
  WATCH_POLL_SECONDS: optional(whole(1, 3600, 'seconds')).default(30),
  WATCH_GRACE_MINUTES: optional(whole(0, 10_080, 'minutes')).default(60),
  WATCH_MAX_DAYS: optional(whole(1, 90, 'days')).default(7),
  WATCH_LIMIT_PER_CHANNEL: optional(whole(1, 10_000, 'a number of watches')).default(100),
  PAYMENT_API_BACKGROUND_RPS: optional(whole(1, 100, 'calls per second')).default(5),
  BALANCE_POLL_SECONDS: optional(whole(1, 3600, 'seconds')).default(60),
  ENDED_RETENTION_DAYS: optional(whole(1, 3650, 'days')).default(30),
});

/** What both modes read alike: all but the one workspace's token and key. */
const commonSchema = schema.omit({ SLACK_BOT_TOKEN: true, PAYMENT_API_KEY: true });

const encryptionKey = z.string('is required').transform((v, ctx) => {
  const key = parseEncryptionKey(v);
  if (key) return key;
  ctx.issues.push({
    code: 'custom',
    message: 'must be 32 random bytes in base64 (README shows how to make one)',
    input: undefined,
  });
  return z.NEVER;
});

const manySchema = commonSchema.extend({
  SLACK_CLIENT_ID: required(text('SLACK_CLIENT_ID')),
  SLACK_CLIENT_SECRET: required(secret('SLACK_CLIENT_SECRET')),
  SLACK_STATE_SECRET: required(secret('SLACK_STATE_SECRET')),
  SLACK_SIGNING_SECRET: required(secret('SLACK_SIGNING_SECRET')),
  ENCRYPTION_KEY: required(encryptionKey),
  ENCRYPTION_KEY_PREVIOUS: optional(encryptionKey),
  SLACK_APP_TOKEN: optional(
    z.string().refine(() => false, 'is for Socket Mode, which serves one workspace: unset it'),
  ),
});

/** Socket Mode when an app-level token is set, otherwise HTTP mode, which needs the signing secret. */
const connectionSchema = z
  .object({
    SLACK_SIGNING_SECRET: optional(secret('SLACK_SIGNING_SECRET')),
    SLACK_APP_TOKEN: optional(token('SLACK_APP_TOKEN', 'xapp-', 'an app-level token')),
  })
  .transform((e, ctx): SlackConnection => {
    if (e.SLACK_APP_TOKEN) return { mode: 'socket', appToken: e.SLACK_APP_TOKEN };
    if (e.SLACK_SIGNING_SECRET) return { mode: 'http', signingSecret: e.SLACK_SIGNING_SECRET };
    ctx.issues.push({
      code: 'custom',
      path: ['SLACK_SIGNING_SECRET'],
      message: 'is required in HTTP mode (or set SLACK_APP_TOKEN for Socket Mode)',
      input: undefined,
    });
    return z.NEVER;
  });

const deepFreeze = <T>(value: T): T => {
  if (value && typeof value === 'object' && !(value instanceof URL) && !Buffer.isBuffer(value)) {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
};

type Parsed = { success: true } | { success: false; error: z.ZodError };

/** Our own messages only: zod's defaults could echo a value, and some of these are secrets. */
function refuse(...results: Parsed[]): never {
  throw new ConfigError(
    results.flatMap((result) =>
      result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`),
    ),
  );
}

/**
 * Many workspaces when an OAuth client id is set; one workspace, exactly as `loadConfig` reads
 * it, when it is not; refused, naming both, when a bot token is set as well.
 */
export function loadSetup(env: NodeJS.ProcessEnv): Setup {
  const set = (name: string) => (env[name] ?? '').trim() !== '';
  // Both ways at once is a switch half made: which one was meant is not the bot's guess.
  if (set('SLACK_BOT_TOKEN') && set('SLACK_CLIENT_ID'))
    throw new ConfigError([
      'SLACK_BOT_TOKEN and SLACK_CLIENT_ID are both set: SLACK_BOT_TOKEN runs the bot for one workspace, SLACK_CLIENT_ID for many through Add to Slack. Leave one of the two empty (README → Configuration).',
    ]);
  if (!set('SLACK_CLIENT_ID')) return { tenancy: 'one', config: loadConfig(env) };
  const parsed = manySchema.safeParse(env);
  if (!parsed.success) refuse(parsed);
  const e = parsed.data;
  return {
    tenancy: 'many',
    config: deepFreeze({
      ...common(e),
      slack: {
        mode: 'http',
        signingSecret: e.SLACK_SIGNING_SECRET,
        apiUrl: slackApiUrl(e.SLACK_API_URL),
        clientId: e.SLACK_CLIENT_ID,
        clientSecret: e.SLACK_CLIENT_SECRET,
        stateSecret: e.SLACK_STATE_SECRET,
      },
      encryption: { current: e.ENCRYPTION_KEY, previous: e.ENCRYPTION_KEY_PREVIOUS },
    }),
  };
}

const slackApiUrl = (url: string) => (url.endsWith('/') ? url : `${url}/`);

export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const parsed = schema.safeParse(env);
  const connection = connectionSchema.safeParse(env);
  if (!parsed.success || !connection.success) refuse(parsed, connection);
  const e = parsed.data;
  const shared = common(e);
  return deepFreeze({
    ...shared,
    slack: { ...connection.data, botToken: e.SLACK_BOT_TOKEN, apiUrl: slackApiUrl(e.SLACK_API_URL) },
    payments: { ...shared.payments, apiKey: e.PAYMENT_API_KEY },
  });
}

/** What both modes read alike. */
function common(e: z.infer<typeof commonSchema>): Omit<ManyWorkspacesConfig, 'slack' | 'encryption'> {
  return {
    http: { port: e.PORT, host: e.HOST, metricsPort: e.METRICS_PORT },
    payments: {
      apiUrl: e.PAYMENT_API_URL,
      payUrl: e.PAYMENT_PAY_URL ? new URL(e.PAYMENT_PAY_URL) : undefined,
      timeoutMs: e.PAYMENT_API_TIMEOUT_MS,
      concurrency: e.PAYMENT_API_CONCURRENCY,
    },
    access: { balanceUsers: e.BALANCE_ALLOWED_USERS, balanceChannels: e.BALANCE_ALLOWED_CHANNELS },
    invoiceReply: e.INVOICE_REPLY,
    logLevel: e.LOG_LEVEL,
    database:
      e.DATABASE_URL.kind === 'postgres'
        ? { ...e.DATABASE_URL, poolSize: e.DATABASE_POOL_SIZE }
        : e.DATABASE_URL,
    watches: {
      pollSeconds: e.WATCH_POLL_SECONDS,
      graceMinutes: e.WATCH_GRACE_MINUTES,
      maxDays: e.WATCH_MAX_DAYS,
      limitPerChannel: e.WATCH_LIMIT_PER_CHANNEL,
    },
    backgroundRps: e.PAYMENT_API_BACKGROUND_RPS,
    balancePollSeconds: e.BALANCE_POLL_SECONDS,
    endedRetentionDays: e.ENDED_RETENTION_DAYS,
  };
}

/** The password in a database URL, as written and decoded, if it has one. */
function databasePassword(location: DatabaseLocation): string[] {
  if (location.kind !== 'postgres') return [];
  const { password } = new URL(location.url);
  return password ? [password, decodeURIComponent(password)] : [];
}

/** The secrets of a many-workspaces configuration, for redaction; the tokens and keys in the store are not among them. */
export function manySecretsOf(config: ManyWorkspacesConfig): string[] {
  const { slack, encryption } = config;
  const keys = [encryption.current, encryption.previous].flatMap((key) =>
    key ? [key.toString('base64'), key.toString('base64url')] : [],
  );
  return [
    slack.signingSecret,
    slack.clientSecret,
    slack.stateSecret,
    ...keys,
    ...databasePassword(config.database),
  ];
}

/** The secrets in a configuration, for redaction. */
export function secretsOf(config: Config): string[] {
  const { slack } = config;
  return [
    slack.botToken,
    slack.mode === 'http' ? slack.signingSecret : slack.appToken,
    config.payments.apiKey,
    ...databasePassword(config.database),
  ];
}
