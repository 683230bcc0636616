import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, loadSetup } from '../src/config.js';

const base = {
  SLACK_BOT_TOKEN: 'xoxb-111-222-abcdef',
  SLACK_SIGNING_SECRET: 'signing-secret-value',
  PAYMENT_API_URL: 'https://api.pay.example',
  PAYMENT_API_KEY: 'api-key-value-123',
};

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  return [];
}

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    expect(loadConfig(base)).toMatchObject({
      http: { port: 3000, host: undefined },
      slack: { mode: 'http', signingSecret: 'signing-secret-value', apiUrl: 'https://slack.com/api/' },
      payments: { timeoutMs: 8000, payUrl: undefined, concurrency: 32 },
      access: { balanceUsers: undefined, balanceChannels: undefined },
      invoiceReply: 'in_channel',
      logLevel: 'info',
    });
  });

  it('runs in Socket Mode when SLACK_APP_TOKEN is set, without a signing secret', () => {
    const { SLACK_SIGNING_SECRET: _, ...socket } = base;
    expect(loadConfig({ ...socket, SLACK_APP_TOKEN: 'xapp-1-A1-abc' }).slack).toEqual({
      mode: 'socket',
      appToken: 'xapp-1-A1-abc',
      botToken: base.SLACK_BOT_TOKEN,
      apiUrl: 'https://slack.com/api/',
    });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      ...base,
      PORT: '8080',
      HOST: '127.0.0.1',
      PAYMENT_API_CONCURRENCY: '8',
      SLACK_API_URL: 'http://127.0.0.1:9/api',
      PAYMENT_PAY_URL: 'https://pay.example/app',
      PAYMENT_API_TIMEOUT_MS: '2500',
      BALANCE_ALLOWED_USERS: ' U01, W02 ,',
      BALANCE_ALLOWED_CHANNELS: 'C01,G02',
      INVOICE_REPLY: 'ephemeral',
      LOG_LEVEL: 'debug',
    });
    expect(config).toMatchObject({
      http: { port: 8080, host: '127.0.0.1' },
      slack: { apiUrl: 'http://127.0.0.1:9/api/' },
      payments: { timeoutMs: 2500, concurrency: 8 },
      access: { balanceUsers: ['U01', 'W02'], balanceChannels: ['C01', 'G02'] },
      invoiceReply: 'ephemeral',
      logLevel: 'debug',
    });
    expect(config.payments.payUrl?.href).toBe('https://pay.example/app');
  });

  it.each(['SLACK_BOT_TOKEN', 'PAYMENT_API_URL', 'PAYMENT_API_KEY'])(
    'says %s is required whether it is unset, empty or blank',
    (name) => {
      const { [name as keyof typeof base]: _, ...without } = base;
      const expected = [`${name}: is required`];
      expect(problems(without)).toEqual(expected);
      expect(problems({ ...base, [name]: '' })).toEqual(expected);
      expect(problems({ ...base, [name]: '   ' })).toEqual(expected);
    },
  );

  it('treats an empty SLACK_APP_TOKEN as unset: HTTP mode, not a broken Socket Mode', () => {
    expect(loadConfig({ ...base, SLACK_APP_TOKEN: '' }).slack.mode).toBe('http');
  });

  it.each([
    [undefined, { kind: 'sqlite', path: './data/bot.sqlite' }],
    ['', { kind: 'sqlite', path: './data/bot.sqlite' }],
    ['file:/var/lib/bot/state.sqlite', { kind: 'sqlite', path: '/var/lib/bot/state.sqlite' }],
    [
      'postgres://bot@db:5432/payments',
      { kind: 'postgres', url: 'postgres://bot@db:5432/payments', poolSize: 10 },
    ],
    [
      'postgresql://bot:long-enough-pw@db/payments',
      { kind: 'postgres', url: 'postgresql://bot:long-enough-pw@db/payments', poolSize: 10 },
    ],
  ])('reads DATABASE_URL=%s', (value, database) => {
    expect(loadConfig({ ...base, ...(value === undefined ? {} : { DATABASE_URL: value }) }).database).toEqual(
      database,
    );
  });

  it('sizes the PostgreSQL pool from DATABASE_POOL_SIZE, and refuses a size that cannot work', () => {
    const url = 'postgres://bot@db:5432/payments';
    expect(loadConfig({ ...base, DATABASE_URL: url, DATABASE_POOL_SIZE: '40' }).database).toEqual({
      kind: 'postgres',
      url,
      poolSize: 40,
    });
    expect(() => loadConfig({ ...base, DATABASE_URL: url, DATABASE_POOL_SIZE: '1' })).toThrow(
      /DATABASE_POOL_SIZE/,
    );
  });

  it('applies the watch and background defaults, and reads them', () => {
    expect(loadConfig(base)).toMatchObject({
      watches: { pollSeconds: 30, graceMinutes: 60, maxDays: 7, limitPerChannel: 100 },
      backgroundRps: 5,
      endedRetentionDays: 30,
    });
    expect(
      loadConfig({
        ...base,
        WATCH_POLL_SECONDS: '1',
        WATCH_GRACE_MINUTES: '0',
        WATCH_MAX_DAYS: '2',
        WATCH_LIMIT_PER_CHANNEL: '5',
        PAYMENT_API_BACKGROUND_RPS: '20',
        ENDED_RETENTION_DAYS: '3650',
      }),
    ).toMatchObject({
      watches: { pollSeconds: 1, graceMinutes: 0, maxDays: 2, limitPerChannel: 5 },
      backgroundRps: 20,
      endedRetentionDays: 3650,
    });
  });

  it('redacts a database password, written and decoded', () => {
    const { secrets } = loadSetup({ ...base, DATABASE_URL: 'postgres://bot:p%40ss-word-long@db/x' });
    expect(secrets).toEqual(expect.arrayContaining(['p%40ss-word-long', 'p@ss-word-long']));
  });

  it('treats empty values as unset', () => {
    expect(loadConfig({ ...base, PORT: '', BALANCE_ALLOWED_USERS: '', LOG_LEVEL: ' ' }).http.port).toBe(3000);
  });

  it('is frozen', () => {
    const config = loadConfig({ ...base, BALANCE_ALLOWED_USERS: 'U1' });
    expect(Object.isFrozen(config.payments)).toBe(true);
    expect(Object.isFrozen(config.access.balanceUsers)).toBe(true);
  });

  it('lists every problem at once, naming variables', () => {
    expect(problems({})).toEqual([
      'SLACK_BOT_TOKEN: is required',
      'SLACK_SIGNING_SECRET: is required in HTTP mode (or set SLACK_APP_TOKEN for Socket Mode)',
      'PAYMENT_API_URL: is required',
      'PAYMENT_API_KEY: is required',
    ]);
  });

  it.each([
    ['SLACK_BOT_TOKEN', 'xoxp-user-token-secret', 'must be a bot token'],
    ['SLACK_APP_TOKEN', 'app-token-secret', 'must be an app-level token'],
    ['PORT', 'eighty', 'must be a port number (digits only)'],
    ['PORT', '70000', 'must be a port number from 0 to 65535'],
    ['PAYMENT_API_URL', 'ftp://files.example', 'must be an http(s) URL'],
    ['PAYMENT_PAY_URL', 'not a url', 'must be an http(s) URL'],
    ['PAYMENT_API_TIMEOUT_MS', '5', 'must be milliseconds from 100 to 120000'],
    ['PAYMENT_API_TIMEOUT_MS', '1e4', 'must be milliseconds (digits only)'],
    ['PORT', '0x50', 'must be a port number (digits only)'],
    ['PORT', '1e3', 'must be a port number (digits only)'],
    ['PORT', '80.0', 'must be a port number (digits only)'],
    ['PAYMENT_API_CONCURRENCY', '0', 'must be a number of calls from 1 to 256'],
    ['HOST', 'http://localhost', 'must be a host name or an IP address'],
    ['BALANCE_ALLOWED_CHANNELS', ',', 'holds no id'],
    ['BALANCE_ALLOWED_USERS', ' , ', 'holds no id'],
    ['SLACK_BOT_TOKEN', 'xoxb-...', 'is still the placeholder from .env.example'],
    ['SLACK_APP_TOKEN', 'xapp-...', 'is still the placeholder from .env.example'],
    [
      'PAYMENT_API_URL',
      'https://api.your-payment-service.example',
      'is still the placeholder from .env.example',
    ],
    [
      'PAYMENT_PAY_URL',
      'https://pay.your-payment-service.example',
      'is still the placeholder from .env.example',
    ],
    ['PAYMENT_API_KEY', 'k', 'must be at least 8 characters'],
    ['SLACK_SIGNING_SECRET', 'abc', 'must be at least 8 characters'],
    ['SLACK_BOT_TOKEN', 'xoxb-1', 'must be at least 8 characters'],
    ['DATABASE_URL', 'mysql://db/x', 'must be postgres://…, postgresql://… or file:<path>'],
    ['DATABASE_URL', 'postgres://bot:pw@db/x', 'has a password shorter than 8 characters'],
    ['WATCH_POLL_SECONDS', '7200', 'must be seconds from 1 to 3600'],
    ['WATCH_POLL_SECONDS', '0.5', 'must be seconds (digits only)'],
    ['WATCH_MAX_DAYS', '91', 'must be days from 1 to 90'],
    ['ENDED_RETENTION_DAYS', '3651', 'must be days from 1 to 3650'],
    ['WATCH_LIMIT_PER_CHANNEL', '20001', 'must be a number of watches from 1 to 10000'],
    ['PAYMENT_API_BACKGROUND_RPS', '500', 'must be calls per second from 1 to 100'],
    ['BALANCE_ALLOWED_USERS', 'U1,alice', 'must be comma-separated Slack user ids'],
    ['BALANCE_ALLOWED_CHANNELS', '#general', 'must be comma-separated Slack channel ids'],
    ['INVOICE_REPLY', 'loud', 'must be in_channel or ephemeral'],
    ['LOG_LEVEL', 'verbose', 'must be one of'],
  ])('rejects %s=%s, naming the variable but never the value', (name, value, message) => {
    const found = problems({ ...base, [name]: value });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(new RegExp(`^${name}: ${message.replace(/[()]/g, '\\$&')}`));
    expect(found[0]).not.toContain(value);
  });
});

describe('loadConfig, at the edges', () => {
  it('names every problem in one message, a line each', () => {
    try {
      loadConfig({ ...base, PORT: 'x', PAYMENT_API_KEY: '' });
      expect.fail('expected a ConfigError');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).name).toBe('ConfigError');
      expect((error as Error).message).toMatch(
        /^Invalid configuration:\n {2}- PORT: .+\n {2}- PAYMENT_API_KEY: .+$/,
      );
    }
  });

  it.each([
    ['a secret of exactly the shortest length', { SLACK_SIGNING_SECRET: '12345678' }],
    ['the highest port', { PORT: '65535' }],
    ['a database password of exactly the shortest length', { DATABASE_URL: 'postgres://bot:12345678@db/x' }],
  ])('accepts %s', (_label, env) => {
    expect(problems({ ...base, ...env })).toEqual([]);
  });

  it.each([
    [
      'an address whose scheme only ends in http',
      { PAYMENT_API_URL: 'xhttp://api.pay.example' },
      'PAYMENT_API_URL',
    ],
    [
      'a database URL that only contains postgres://',
      { DATABASE_URL: 'xpostgres://bot:12345678@db/x' },
      'DATABASE_URL',
    ],
    [
      'a file: database path that does not start the value',
      { DATABASE_URL: 'data/file:bot.sqlite' },
      'DATABASE_URL',
    ],
  ])('refuses %s', (_label, env, variable) => {
    expect(problems({ ...base, ...env })).toEqual([expect.stringMatching(new RegExp(`^${variable}: `))]);
  });

  it('redacts exactly the secrets of the mode in use, and no password for SQLite', () => {
    expect(loadSetup(base).secrets).toEqual([
      base.SLACK_BOT_TOKEN,
      base.SLACK_SIGNING_SECRET,
      base.PAYMENT_API_KEY,
    ]);
    const socket = loadSetup({ ...base, SLACK_APP_TOKEN: 'xapp-1-A0-123-abc' });
    expect(socket.secrets).toEqual([base.SLACK_BOT_TOKEN, 'xapp-1-A0-123-abc', base.PAYMENT_API_KEY]);
    const passwordless = loadSetup({ ...base, DATABASE_URL: 'postgres://bot@db/x' });
    expect(passwordless.secrets).toHaveLength(3);
  });
});

describe('what loadConfig says of each variable', () => {
  it('names every variable it refuses, with what it must be', () => {
    expect(
      problems({
        ...base,
        PORT: '70000',
        PAYMENT_API_TIMEOUT_MS: '99',
        PAYMENT_API_CONCURRENCY: '0',
        WATCH_POLL_SECONDS: '0',
        WATCH_GRACE_MINUTES: '-1',
        WATCH_MAX_DAYS: '91',
        WATCH_LIMIT_PER_CHANNEL: '0',
        PAYMENT_API_BACKGROUND_RPS: '101',
        BALANCE_POLL_SECONDS: '3601',
        BALANCE_ALLOWED_USERS: 'x',
        BALANCE_ALLOWED_CHANNELS: 'x',
        INVOICE_REPLY: 'x',
        LOG_LEVEL: 'x',
        HOST: 'a b',
        SLACK_API_URL: 'x',
        PAYMENT_PAY_URL: 'x',
        SLACK_BOT_TOKEN: 'x',
        SLACK_APP_TOKEN: 'x',
        DATABASE_URL: 'x',
      }),
    ).toEqual([
      'SLACK_BOT_TOKEN: must be at least 8 characters',
      'SLACK_APP_TOKEN: must be at least 8 characters',
      'PORT: must be a port number from 0 to 65535',
      'HOST: must be a host name or an IP address',
      'SLACK_API_URL: must be an http(s) URL (the Slack Web API base)',
      'PAYMENT_PAY_URL: must be an http(s) URL (the origin of payment links)',
      'PAYMENT_API_TIMEOUT_MS: must be milliseconds from 100 to 120000',
      'PAYMENT_API_CONCURRENCY: must be a number of calls from 1 to 256',
      'BALANCE_ALLOWED_USERS: must be comma-separated Slack user ids (U…)',
      'BALANCE_ALLOWED_CHANNELS: must be comma-separated Slack channel ids (C…, G…, D…)',
      'INVOICE_REPLY: must be in_channel or ephemeral',
      'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent',
      'DATABASE_URL: must be postgres://…, postgresql://… or file:<path>',
      'WATCH_POLL_SECONDS: must be seconds from 1 to 3600',
      'WATCH_GRACE_MINUTES: must be minutes (digits only)',
      'WATCH_MAX_DAYS: must be days from 1 to 90',
      'WATCH_LIMIT_PER_CHANNEL: must be a number of watches from 1 to 10000',
      'BALANCE_POLL_SECONDS: must be seconds from 1 to 3600',
      'PAYMENT_API_BACKGROUND_RPS: must be calls per second from 1 to 100',
    ]);
  });

  it('says which kind of token or address it wanted', () => {
    expect(
      problems({
        SLACK_BOT_TOKEN: 'xapp-1234567890',
        SLACK_APP_TOKEN: 'xoxb-1234567890',
        PAYMENT_API_URL: 'ftp://a.example',
        PAYMENT_API_KEY: 'short',
        WATCH_GRACE_MINUTES: '10081',
        PORT: '1.5',
      }),
    ).toEqual([
      'SLACK_BOT_TOKEN: must be a bot token (xoxb-…)',
      'SLACK_APP_TOKEN: must be an app-level token (xapp-…)',
      'PORT: must be a port number (digits only)',
      'PAYMENT_API_URL: must be an http(s) URL (the payment service base address)',
      'PAYMENT_API_KEY: must be at least 8 characters',
      'WATCH_GRACE_MINUTES: must be minutes from 0 to 10080',
    ]);
    expect(problems({})).toEqual([
      'SLACK_BOT_TOKEN: is required',
      'SLACK_SIGNING_SECRET: is required in HTTP mode (or set SLACK_APP_TOKEN for Socket Mode)',
      'PAYMENT_API_URL: is required',
      'PAYMENT_API_KEY: is required',
    ]);
  });
});

describe('values with spaces around them, as .env files often have', () => {
  it('reads them trimmed', () => {
    const config = loadConfig({
      SLACK_BOT_TOKEN: ` ${base.SLACK_BOT_TOKEN} `,
      SLACK_SIGNING_SECRET: ` ${base.SLACK_SIGNING_SECRET}\t`,
      PAYMENT_API_URL: ` ${base.PAYMENT_API_URL} `,
      PAYMENT_API_KEY: ` ${base.PAYMENT_API_KEY} `,
      PORT: ' 8080 ',
      HOST: ' 127.0.0.1 ',
      DATABASE_URL: ' file:/tmp/bot.sqlite ',
    });
    expect(config.slack).toMatchObject({
      botToken: base.SLACK_BOT_TOKEN,
      signingSecret: base.SLACK_SIGNING_SECRET,
    });
    expect(config.payments).toMatchObject({ apiKey: base.PAYMENT_API_KEY });
    expect(config.http).toEqual({ port: 8080, host: '127.0.0.1' });
    expect(config.database).toEqual({ kind: 'sqlite', path: '/tmp/bot.sqlite' });
  });

  it('says an id list of only commas holds no id, once', () => {
    expect(problems({ ...base, BALANCE_ALLOWED_USERS: ' , ,' })).toEqual([
      'BALANCE_ALLOWED_USERS: holds no id: leave it unset to allow all',
    ]);
  });
});

describe('Slack ids in the access lists', () => {
  it.each(['xU0FIN', 'U0FINx', 'U0FIN-2'])('refuses the user id %j: only a whole id will do', (id) => {
    expect(problems({ ...base, BALANCE_ALLOWED_USERS: id })).toEqual([
      'BALANCE_ALLOWED_USERS: must be comma-separated Slack user ids (U…)',
    ]);
  });

  it.each(['xC0FIN', 'C0FINx', 'G0FIN-2'])('refuses the channel id %j: only a whole id will do', (id) => {
    expect(problems({ ...base, BALANCE_ALLOWED_CHANNELS: id })).toEqual([
      'BALANCE_ALLOWED_CHANNELS: must be comma-separated Slack channel ids (C…, G…, D…)',
    ]);
  });
});
