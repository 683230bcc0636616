import { z } from 'zod';
import type { Visibility } from './pipeline/outcome.js';
import { CHANNEL_ID, USER_ID } from './slack-ids.js';

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
  port: number;
  payments: {
    apiUrl: string;
    apiKey: string;
    /** The `{pay_url}` of payment links, for pasted links and unfurls; any host when unset. */
    payUrl: URL | undefined;
    timeoutMs: number;
  };
  access: {
    balanceUsers: readonly string[] | undefined;
    balanceChannels: readonly string[] | undefined;
  };
  invoiceReply: Visibility;
  logLevel: LogLevel;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** Unset and empty are the same: `FOO=` in a .env file means "not set". */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), schema.optional());

const httpUrl = (what: string) =>
  z
    .string()
    .trim()
    .refine(
      (v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol),
      `must be an http(s) URL (${what})`,
    );

const idList = (pattern: RegExp, what: string) =>
  optional(
    z
      .string()
      .transform((v) =>
        v
          .split(',')
          .map((id) => id.trim())
          .filter(Boolean),
      )
      .refine((ids) => ids.every((id) => pattern.test(id)), `must be comma-separated ${what}`),
  );

const schema = z.object({
  SLACK_BOT_TOKEN: z.string('is required').trim().startsWith('xoxb-', 'must be a bot token (xoxb-…)'),
  PORT: optional(
    z.coerce
      .number('must be a port number')
      .int('must be a port number')
      .min(0)
      .max(65535, 'must be a port number'),
  ).default(3000),
  SLACK_API_URL: optional(httpUrl('the Slack Web API base')).default('https://slack.com/api/'),
  PAYMENT_API_URL: z.string('is required').pipe(httpUrl('the payment service base address')),
  PAYMENT_API_KEY: z.string('is required').trim().min(1, 'is required'),
  PAYMENT_PAY_URL: optional(httpUrl('the origin of payment links')),
  PAYMENT_API_TIMEOUT_MS: optional(
    z.coerce
      .number('must be milliseconds')
      .int('must be milliseconds')
      .min(100, 'must be 100..120000')
      .max(120_000, 'must be 100..120000'),
  ).default(8000),
  BALANCE_ALLOWED_USERS: idList(USER_ID, 'Slack user ids (U…)'),
  BALANCE_ALLOWED_CHANNELS: idList(CHANNEL_ID, 'Slack channel ids (C…, G…, D…)'),
  INVOICE_REPLY: optional(z.enum(['in_channel', 'ephemeral'], 'must be in_channel or ephemeral')).default(
    'in_channel',
  ),
  LOG_LEVEL: optional(z.enum(LOG_LEVELS, `must be one of ${LOG_LEVELS.join(', ')}`)).default('info'),
});

/** Socket Mode when an app-level token is set, otherwise HTTP mode, which needs the signing secret. */
const connectionSchema = z
  .object({
    SLACK_SIGNING_SECRET: optional(z.string().trim()),
    SLACK_APP_TOKEN: optional(z.string().trim().startsWith('xapp-', 'must be an app-level token (xapp-…)')),
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
  if (value && typeof value === 'object' && !(value instanceof URL)) {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
};

export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const parsed = schema.safeParse(env);
  const connection = connectionSchema.safeParse(env);
  // Our own messages only: zod's defaults could echo a value, and some of these are secrets.
  const problems = [parsed, connection].flatMap((result) =>
    result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`),
  );
  if (!parsed.success || !connection.success) throw new ConfigError(problems);
  const e = parsed.data;
  return deepFreeze({
    slack: {
      ...connection.data,
      botToken: e.SLACK_BOT_TOKEN,
      apiUrl: e.SLACK_API_URL.endsWith('/') ? e.SLACK_API_URL : `${e.SLACK_API_URL}/`,
    },
    port: e.PORT,
    payments: {
      apiUrl: e.PAYMENT_API_URL,
      apiKey: e.PAYMENT_API_KEY,
      payUrl: e.PAYMENT_PAY_URL ? new URL(e.PAYMENT_PAY_URL) : undefined,
      timeoutMs: e.PAYMENT_API_TIMEOUT_MS,
    },
    access: { balanceUsers: e.BALANCE_ALLOWED_USERS, balanceChannels: e.BALANCE_ALLOWED_CHANNELS },
    invoiceReply: e.INVOICE_REPLY,
    logLevel: e.LOG_LEVEL,
  });
}

/** The secrets in a configuration, for redaction. */
export function secretsOf(config: Config): string[] {
  const { slack } = config;
  return [
    slack.botToken,
    slack.mode === 'http' ? slack.signingSecret : slack.appToken,
    config.payments.apiKey,
  ];
}
