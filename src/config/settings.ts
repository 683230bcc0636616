import { z } from 'zod';
import { CHANNEL_ID, USER_ID } from '../slack-ids.js';
import { DEFAULT_POOL_SIZE } from '../store/location.js';
import {
  databasePassword,
  databaseUrl,
  encryptionKey,
  hostName,
  httpUrl,
  idList,
  keySpellings,
  LOG_LEVELS,
  secret,
  text,
  token,
  whole,
} from './values.js';

/**
 * Every setting, declared once: its environment name (the key), what a value must be, its
 * default, whether it is secret, which modes read it, and its documentation. `Config`, the
 * secrets to redact, the "set but not read" check, `.env.example` and the README's table all
 * follow from this table (test/config-registry.test.ts fails when they disagree).
 */

/**
 * The ways the program runs: one workspace over HTTP or Socket Mode, many workspaces (always
 * HTTP), or the local demo, which reads only where to serve its page.
 */
export type Mode = 'http' | 'socket' | 'many' | 'demo';

interface Setting<S extends z.ZodType = z.ZodType> {
  /** What a value must be, from the environment's text (blank counts as unset, everywhere). */
  readonly value: S;
  /** What an unset setting is; none: it stays undefined (or is required). */
  readonly default?: z.output<S>;
  /** The docs' Default cell, when it is not the default value itself. */
  readonly shown?: string;
  /** Which modes read it. */
  readonly reads: readonly Mode[];
  /** Required in every mode that reads it. */
  readonly required?: boolean;
  /** What "is required" says instead, in a mode. */
  readonly whenMissing?: Partial<Record<Mode, string>>;
  /** Set in a mode that does not read it, it is refused with this reason, not merely named. */
  readonly refused?: Partial<Record<Mode, string>>;
  /** Set in a mode that does not read it: what to do, besides unsetting it. */
  readonly unreadHint?: Partial<Record<Mode, string>>;
  /** The secrets its value holds, for redaction; `true`: the value itself. */
  readonly secret?: true | ((value: z.output<S>) => string[]);
  /** The docs' one-line meaning. */
  readonly doc: string;
}

const ONE: readonly Mode[] = ['http', 'socket'];
const ALL: readonly Mode[] = ['http', 'socket', 'many'];
const PORT_RANGE = whole(0, 65535, 'a port number');
const KEY_NOT_WITH_MANY =
  'is not read with many workspaces (each workspace connects its own payment account on the app’s Home tab): unset it';
const ALLOW_LIST_NOT_WITH_MANY =
  'is one workspace’s allow-list and is not read with many workspaces, so it would narrow nothing: unset it';

/** A setting, its value's type kept, and whether it has a default. */
const setting = <S extends z.ZodType, const D extends z.output<S> | undefined = undefined>(
  spec: Setting<S> & { default?: D },
) => spec as Setting<S> & { default: D };

const SETTINGS = {
  SLACK_BOT_TOKEN: setting({
    value: token('SLACK_BOT_TOKEN', 'xoxb-', 'a bot token'),
    reads: ONE,
    required: true,
    secret: true,
    doc: 'Bot token, `xoxb-…`. Checked with `auth.test` at start, which also tells the bot its own workspace. Set, the bot serves that one workspace; unset with `SLACK_CLIENT_ID` set, it serves [many](#offer-it-to-many-workspaces).',
  }),
  SLACK_APP_TOKEN: setting({
    value: token('SLACK_APP_TOKEN', 'xapp-', 'an app-level token'),
    reads: ['socket'],
    required: true,
    refused: { many: 'is for Socket Mode, which serves one workspace: unset it' },
    secret: true,
    doc: 'App-level token, `xapp-…`. When set, the bot runs in Socket Mode.',
  }),
  SLACK_SIGNING_SECRET: setting({
    value: secret('SLACK_SIGNING_SECRET'),
    reads: ['http', 'many'],
    required: true,
    whenMissing: { http: 'is required in HTTP mode (or set SLACK_APP_TOKEN for Socket Mode)' },
    unreadHint: { socket: 'to take Slack’s requests over HTTP instead, unset SLACK_APP_TOKEN' },
    secret: true,
    doc: 'Verifies that requests come from Slack.',
  }),
  PORT: setting({
    value: PORT_RANGE,
    default: 3000,
    reads: [...ALL, 'demo'],
    doc: 'HTTP port: `/slack/events` and `/healthz` in HTTP mode; `/healthz` only in Socket Mode. Digits only.',
  }),
  HOST: setting({
    value: hostName,
    shown: 'all interfaces',
    reads: [...ALL, 'demo'],
    doc: 'The interface to listen on, e.g. `127.0.0.1` behind a local reverse proxy.',
  }),
  METRICS_PORT: setting({
    value: whole(1, 65535, 'a port number'),
    reads: ALL,
    doc: '`/metrics` on this port alone (with `/healthz` beside it), no longer on `PORT`: on a platform with one public port, the metrics stay off it. Unset: `/metrics` is on `PORT`. Not the same as `PORT`.',
  }),
  SLACK_API_URL: setting({
    value: httpUrl('SLACK_API_URL', 'the Slack Web API base'),
    default: 'https://slack.com/api/',
    reads: ALL,
    doc: "Slack Web API base URL (GovSlack, a proxy, the tests' stand-in).",
  }),
  PAYMENT_API_URL: setting({
    value: httpUrl('PAYMENT_API_URL', 'the payment service base address'),
    reads: ALL,
    required: true,
    doc: "The payment service's base address; the bot calls `/api/v2/balance` and `/api/v2/invoice/<id>` under it.",
  }),
  PAYMENT_API_KEY: setting({
    value: secret('PAYMENT_API_KEY'),
    reads: ONE,
    required: true,
    refused: { many: KEY_NOT_WITH_MANY },
    secret: true,
    doc: 'The API key of any active project (at least 8 characters). Refused with many workspaces: each connects its own.',
  }),
  SLACK_CLIENT_ID: setting({
    value: text('SLACK_CLIENT_ID'),
    reads: ['many'],
    required: true,
    doc: "The app's Client ID (**Basic Information → App Credentials**). With no `SLACK_BOT_TOKEN`, it makes the bot serve [many workspaces](#offer-it-to-many-workspaces).",
  }),
  SLACK_CLIENT_SECRET: setting({
    value: secret('SLACK_CLIENT_SECRET'),
    reads: ['many'],
    required: true,
    secret: true,
    doc: "The app's Client Secret, for `oauth.v2.access`.",
  }),
  SLACK_STATE_SECRET: setting({
    value: secret('SLACK_STATE_SECRET'),
    reads: ['many'],
    required: true,
    secret: true,
    doc: 'Any random text of 8 characters or more: signs the `state` of each install, so a forged or replayed one installs nothing.',
  }),
  ENCRYPTION_KEY: setting({
    value: encryptionKey,
    reads: ['many'],
    required: true,
    secret: keySpellings,
    doc: "32 random bytes in base64; seals the tokens and keys in the store (AES-256-GCM). Make one with `node -e \"console.log(require('crypto').randomBytes(32).toString('base64'))\"`.",
  }),
  ENCRYPTION_KEY_PREVIOUS: setting({
    value: encryptionKey,
    reads: ['many'],
    secret: keySpellings,
    doc: 'A second key, only while you rotate (see [Rotating `ENCRYPTION_KEY`](docs/many-workspaces.md#rotating-encryption_key)): it opens what it sealed but never seals. A start given it seals again with `ENCRYPTION_KEY` whatever it sealed.',
  }),
  PAYMENT_PAY_URL: setting({
    value: httpUrl('PAYMENT_PAY_URL', 'the origin of payment links').transform((v) => new URL(v)),
    shown: 'any host',
    reads: ALL,
    doc: 'The origin of payment links (`{pay_url}/pay/<id>`). Pasted links and unfurls must be on this host; unset accepts any host.',
  }),
  PAYMENT_API_TIMEOUT_MS: setting({
    value: whole(100, 120_000, 'milliseconds'),
    default: 8000,
    reads: ALL,
    doc: 'Deadline for one call to the service, retries included (100–120000). It starts when the call gets its turn.',
  }),
  PAYMENT_API_CONCURRENCY: setting({
    value: whole(1, 256, 'a number of calls'),
    default: 32,
    reads: ALL,
    doc: 'Calls to the service at once (1–256); more wait their turn (see [docs/operating.md](docs/operating.md#operating-it)).',
  }),
  BALANCE_ALLOWED_USERS: setting({
    value: idList(USER_ID, 'Slack user ids (U…)'),
    shown: 'everyone',
    reads: ONE,
    refused: { many: ALLOW_LIST_NOT_WITH_MANY },
    doc: 'Comma-separated user ids (`U…`) allowed to run `/balance`. One workspace only.',
  }),
  BALANCE_ALLOWED_CHANNELS: setting({
    value: idList(CHANNEL_ID, 'Slack channel ids (C…, G…, D…)'),
    shown: 'any',
    reads: ONE,
    refused: { many: ALLOW_LIST_NOT_WITH_MANY },
    doc: 'Comma-separated channel ids (`C…`) where `/balance` may run. One workspace only.',
  }),
  INVOICE_REPLY: setting({
    value: z.enum(['in_channel', 'ephemeral'], 'must be in_channel or ephemeral'),
    default: 'in_channel',
    reads: ALL,
    doc: '`in_channel` or `ephemeral`: who sees `/invoice` replies. Errors are always private.',
  }),
  LOG_LEVEL: setting({
    value: z.enum(LOG_LEVELS, `must be one of ${LOG_LEVELS.join(', ')}`),
    default: 'info',
    reads: ALL,
    doc: '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`.',
  }),
  DATABASE_URL: setting({
    value: databaseUrl,
    default: { kind: 'sqlite', path: './data/bot.sqlite' },
    shown: '`./data/bot.sqlite`',
    reads: ALL,
    secret: databasePassword,
    doc: 'Where the bot keeps watches and what it announced. Unset: a SQLite file at `./data/bot.sqlite` (the directory is created). `file:<path>`: SQLite at that path. `postgres://…` or `postgresql://…`: PostgreSQL, needed to run several instances ([docs/postgresql.md](docs/postgresql.md): role, TLS, connections, backups). Tables are created and migrated at start.',
  }),
  DATABASE_POOL_SIZE: setting({
    value: whole(2, 200, 'connections'),
    default: DEFAULT_POOL_SIZE,
    reads: ALL,
    doc: "PostgreSQL connections each instance keeps at most (2–200). Every instance's pool together must stay under the server's `max_connections`. Nothing holds a connection while it waits for another, so a small pool is slow under load, never stuck.",
  }),
  WATCH_POLL_SECONDS: setting({
    value: whole(1, 3600, 'seconds'),
    default: 30,
    reads: ALL,
    doc: 'How often a watched invoice is checked in its first 30 minutes (1–3600); slower after that, see [docs/watches.md](docs/watches.md#what-it-costs-the-payment-service).',
  }),
  WATCH_GRACE_MINUTES: setting({
    value: whole(0, 10_080, 'minutes'),
    default: 60,
    reads: ALL,
    doc: "How long a watch goes on after its invoice's expiry, for late payments (0–10080).",
  }),
  WATCH_MAX_DAYS: setting({
    value: whole(1, 90, 'days'),
    default: 7,
    reads: ALL,
    doc: 'A watch ends after this many days whatever happens (1–90).',
  }),
  WATCH_LIMIT_PER_CHANNEL: setting({
    value: whole(1, 10_000, 'a number of watches'),
    default: 100,
    reads: ALL,
    doc: 'Active watches allowed in one channel (1–10000).',
  }),
  BALANCE_POLL_SECONDS: setting({
    value: whole(1, 3600, 'seconds'),
    default: 60,
    reads: ALL,
    doc: 'How often the payments feed reads the balance (1–3600); one reading serves every subscribed channel.',
  }),
  PAYMENT_API_BACKGROUND_RPS: setting({
    value: whole(1, 100, 'calls per second'),
    default: 5,
    reads: ALL,
    doc: "Calls per second that background work (watches, the payments feed) may make to the payment service (1–100): per instance with one workspace; per key across all instances with many workspaces, spaced so that calls arriving late never crowd a second past it (4 a second at 5). People's commands never wait behind it.",
  }),
  ENDED_RETENTION_DAYS: setting({
    value: whole(1, 3650, 'days'),
    default: 30,
    reads: ALL,
    doc: 'How long an ended watch or payments feed is kept before it is deleted (1–3650): about once an hour, by each instance’s watch check and digest jobs, never the same row twice.',
  }),
};

export type SettingName = keyof typeof SETTINGS;

/** A setting's value once read: its default when unset, undefined when it has none. */
export type Values = {
  [K in SettingName]: [(typeof SETTINGS)[K]['default']] extends [undefined]
    ? z.output<(typeof SETTINGS)[K]['value']> | undefined
    : z.output<(typeof SETTINGS)[K]['value']>;
};

export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

/** The registry, each entry seen through the common shape. */
export const settingOf = (name: SettingName): Setting => SETTINGS[name] as Setting;
