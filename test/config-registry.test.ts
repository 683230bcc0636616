import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { settingsTable } from '../scripts/settings-table.js';
import { type Mode, SETTING_NAMES, type SettingName, settingOf } from '../src/config/settings.js';
import { ConfigError, loadSetup, PLACEHOLDERS } from '../src/config.js';

/**
 * Every setting is declared once (src/config/settings.ts); what follows from that declaration is
 * checked against it here: what each mode reads into its Config, what it redacts, what it names
 * as unread or refuses, `.env.example` and the README's table.
 */

const read = (name: string) => readFileSync(new URL(`../${name}`, import.meta.url), 'utf8');

/** The least each mode starts with. */
const BASE: Record<Exclude<Mode, 'demo'>, Record<string, string>> = {
  http: {
    SLACK_BOT_TOKEN: 'xoxb-111-222-abcdef',
    SLACK_SIGNING_SECRET: 'signing-secret-value',
    PAYMENT_API_URL: 'https://api.pay.example',
    PAYMENT_API_KEY: 'api-key-value-123',
  },
  socket: {
    SLACK_BOT_TOKEN: 'xoxb-111-222-abcdef',
    SLACK_APP_TOKEN: 'xapp-1-A0-123-abcdef',
    PAYMENT_API_URL: 'https://api.pay.example',
    PAYMENT_API_KEY: 'api-key-value-123',
  },
  many: {
    SLACK_CLIENT_ID: '1234.5678',
    SLACK_CLIENT_SECRET: 'client-secret-value',
    SLACK_STATE_SECRET: 'state-secret-value',
    SLACK_SIGNING_SECRET: 'signing-secret-value',
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    PAYMENT_API_URL: 'https://api.pay.example',
  },
};

/**
 * A valid value of each setting, other than any base's and any default (and what else it needs
 * to matter). A setting added without one here does not compile.
 */
const EXAMPLES: Record<SettingName, { value: string; with?: Record<string, string> }> = {
  SLACK_BOT_TOKEN: { value: 'xoxb-333-444-ghijkl' },
  SLACK_APP_TOKEN: { value: 'xapp-1-A0-456-ghijkl' },
  SLACK_SIGNING_SECRET: { value: 'another-signing-secret' },
  PORT: { value: '8080' },
  HOST: { value: '127.0.0.1' },
  METRICS_PORT: { value: '9464' },
  SLACK_API_URL: { value: 'https://slack.example/api/' },
  PAYMENT_API_URL: { value: 'https://other.pay.example' },
  PAYMENT_API_KEY: { value: 'another-api-key' },
  SLACK_CLIENT_ID: { value: '9999.8888' },
  SLACK_CLIENT_SECRET: { value: 'another-client-secret' },
  SLACK_STATE_SECRET: { value: 'another-state-secret' },
  ENCRYPTION_KEY: { value: randomBytes(32).toString('base64') },
  ENCRYPTION_KEY_PREVIOUS: { value: randomBytes(32).toString('base64') },
  PAYMENT_PAY_URL: { value: 'https://pay.pay.example' },
  PAYMENT_API_TIMEOUT_MS: { value: '5000' },
  PAYMENT_API_CONCURRENCY: { value: '8' },
  BALANCE_ALLOWED_USERS: { value: 'U0FINANCE' },
  BALANCE_ALLOWED_CHANNELS: { value: 'C0FINANCE' },
  INVOICE_REPLY: { value: 'ephemeral' },
  LOG_LEVEL: { value: 'debug' },
  DATABASE_URL: { value: 'postgres://bot:database-password@db/x' },
  DATABASE_POOL_SIZE: { value: '40', with: { DATABASE_URL: 'postgres://bot@db/x' } },
  WATCH_POLL_SECONDS: { value: '10' },
  WATCH_GRACE_MINUTES: { value: '5' },
  WATCH_MAX_DAYS: { value: '3' },
  WATCH_LIMIT_PER_CHANNEL: { value: '50' },
  BALANCE_POLL_SECONDS: { value: '120' },
  PAYMENT_API_BACKGROUND_RPS: { value: '2' },
  ENDED_RETENTION_DAYS: { value: '90' },
};

/** Settings whose being set chooses the mode: set in another mode, they change the mode instead. */
const CHOOSERS: readonly SettingName[] = ['SLACK_BOT_TOKEN', 'SLACK_APP_TOKEN', 'SLACK_CLIENT_ID'];

const modes = Object.keys(BASE) as Exclude<Mode, 'demo'>[];
const cases = modes.flatMap((mode) => SETTING_NAMES.map((name) => [mode, name] as const));

function refusal(env: Record<string, string>): string[] {
  try {
    loadSetup(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
}

describe('what each mode makes of each setting', () => {
  it.each(cases)('%s: %s is read into the Config, or named, or refused', (mode, name) => {
    const setting = settingOf(name);
    const refused = setting.refused?.[mode];
    // Set where not read, these choose another mode (or, a bot token with a client id, are refused: config-setup.test.ts).
    if (CHOOSERS.includes(name) && !setting.reads.includes(mode) && !refused) return;
    const { value, with: needs = {} } = EXAMPLES[name];
    const base = { ...BASE[mode], ...needs };
    const given = { ...base, [name]: value };
    if (refused) {
      expect(refusal(given)).toEqual([`${name}: ${refused}`]);
      return;
    }
    const before = loadSetup(base);
    const after = loadSetup(given);
    expect(after.mode).toBe(mode);
    if (setting.reads.includes(mode)) {
      expect(after.config).not.toEqual(before.config);
      expect(after.unread).toEqual([]);
    } else {
      expect(after.config).toEqual(before.config);
      expect(after.unread.map((u) => u.setting)).toEqual([name]);
      expect(after.unread[0]?.message).toMatch(
        new RegExp(`^${name} is set, but .+ does not read it: unset it`),
      );
    }
    // A secret it reads is redacted, in every spelling; nothing else is.
    const added = after.secrets.filter((s) => !before.secrets.includes(s));
    if (setting.secret && setting.reads.includes(mode)) expect(added.length).toBeGreaterThan(0);
    else expect(added).toEqual([]);
  });

  it('says first which mode runs and why', () => {
    expect(loadSetup(BASE.http).why).toBe(
      'one workspace over HTTP, because SLACK_BOT_TOKEN is set and SLACK_APP_TOKEN is not',
    );
    expect(loadSetup(BASE.socket).why).toBe('one workspace over Socket Mode, because SLACK_APP_TOKEN is set');
    expect(loadSetup(BASE.many).why).toBe(
      'many workspaces through Add to Slack, because SLACK_CLIENT_ID is set',
    );
  });

  it('names a signing secret Socket Mode leaves unread, and says how to run over HTTP instead', () => {
    const { unread } = loadSetup({ ...BASE.socket, SLACK_SIGNING_SECRET: 'signing-secret-value' });
    expect(unread).toEqual([
      {
        setting: 'SLACK_SIGNING_SECRET',
        message:
          'SLACK_SIGNING_SECRET is set, but one workspace over Socket Mode does not read it: unset it; to take Slack’s requests over HTTP instead, unset SLACK_APP_TOKEN',
      },
    ]);
  });

  it('names DATABASE_POOL_SIZE with a SQLite store, which has no pool', () => {
    expect(loadSetup({ ...BASE.http, DATABASE_POOL_SIZE: '40' }).unread).toEqual([
      {
        setting: 'DATABASE_POOL_SIZE',
        message:
          'DATABASE_POOL_SIZE is set, but a SQLite store does not read it (it sizes PostgreSQL’s pool): unset it',
      },
    ]);
  });

  it('refuses a payment key with many workspaces: each workspace connects its own', () => {
    expect(refusal({ ...BASE.many, PAYMENT_API_KEY: 'api-key-value-123' })).toEqual([
      'PAYMENT_API_KEY: is not read with many workspaces (each workspace connects its own payment account on the app’s Home tab): unset it',
    ]);
  });

  it('refuses a /balance allow-list with many workspaces: it would narrow nothing', () => {
    expect(refusal({ ...BASE.many, BALANCE_ALLOWED_CHANNELS: 'C0FINANCE' })).toEqual([
      'BALANCE_ALLOWED_CHANNELS: is one workspace’s allow-list and is not read with many workspaces, so it would narrow nothing: unset it',
    ]);
  });

  it('refuses METRICS_PORT equal to PORT, the default one included', () => {
    const problem =
      'METRICS_PORT: must not be PORT: the two are servers of their own. Choose another port, or unset METRICS_PORT to serve /metrics on PORT';
    expect(refusal({ ...BASE.http, PORT: '8080', METRICS_PORT: '8080' })).toEqual([problem]);
    expect(refusal({ ...BASE.many, METRICS_PORT: '3000' })).toEqual([problem]);
    expect(refusal({ ...BASE.socket, PORT: '8080', METRICS_PORT: '3000' })).toEqual([]);
  });
});

describe('.env.example and the README, from the same declaration', () => {
  const envExample = read('.env.example');
  const lines = [...envExample.matchAll(/^(#\s*)?([A-Z][A-Z0-9_]+)=(.*)$/gm)].map((m) => ({
    commented: m[1] !== undefined,
    name: m[2] as string,
    value: m[3] as string,
  }));

  it('.env.example names every setting, and nothing else', () => {
    expect([...new Set(lines.map((l) => l.name))].sort()).toEqual([...SETTING_NAMES].sort());
  });

  it('.env.example shows only values the bot takes: the default when it has one, or its placeholder', () => {
    for (const { name, value } of lines) {
      if (value === '') continue;
      const setting = settingOf(name as SettingName);
      if (PLACEHOLDERS[name] === value) continue;
      expect(setting.value.safeParse(value).success, name).toBe(true);
      if (typeof setting.default === 'string' || typeof setting.default === 'number')
        expect(value, name).toBe(String(setting.default));
    }
  });

  it("the README's table is the one scripts/settings-table.ts writes (npx tsx scripts/settings-table.ts)", () => {
    const table = /<!-- settings:start -->\n([\s\S]*?)<!-- settings:end -->/.exec(read('README.md'))?.[1];
    expect(table).toBe(settingsTable());
  });
});
