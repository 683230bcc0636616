import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

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
      port: 3000,
      slack: { mode: 'http', signingSecret: 'signing-secret-value', apiUrl: 'https://slack.com/api/' },
      payments: { timeoutMs: 8000, payUrl: undefined },
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
      SLACK_API_URL: 'http://127.0.0.1:9/api',
      PAYMENT_PAY_URL: 'https://pay.example/app',
      PAYMENT_API_TIMEOUT_MS: '2500',
      BALANCE_ALLOWED_USERS: ' U01, W02 ,',
      BALANCE_ALLOWED_CHANNELS: 'C01,G02',
      INVOICE_REPLY: 'ephemeral',
      LOG_LEVEL: 'debug',
    });
    expect(config).toMatchObject({
      port: 8080,
      slack: { apiUrl: 'http://127.0.0.1:9/api/' },
      payments: { timeoutMs: 2500 },
      access: { balanceUsers: ['U01', 'W02'], balanceChannels: ['C01', 'G02'] },
      invoiceReply: 'ephemeral',
      logLevel: 'debug',
    });
    expect(config.payments.payUrl?.href).toBe('https://pay.example/app');
  });

  it('treats empty values as unset', () => {
    expect(loadConfig({ ...base, PORT: '', BALANCE_ALLOWED_USERS: '', LOG_LEVEL: ' ' }).port).toBe(3000);
  });

  it('is frozen', () => {
    const config = loadConfig({ ...base, BALANCE_ALLOWED_USERS: 'U1' });
    expect(Object.isFrozen(config.payments)).toBe(true);
    expect(Object.isFrozen(config.access.balanceUsers)).toBe(true);
  });

  it('lists every problem at once, naming variables', () => {
    expect(problems({})).toEqual([
      'SLACK_BOT_TOKEN: is required',
      'PAYMENT_API_URL: is required',
      'PAYMENT_API_KEY: is required',
      'SLACK_SIGNING_SECRET: is required in HTTP mode (or set SLACK_APP_TOKEN for Socket Mode)',
    ]);
  });

  it.each([
    ['SLACK_BOT_TOKEN', 'xoxp-user-token-secret', 'must be a bot token'],
    ['SLACK_APP_TOKEN', 'app-token-secret', 'must be an app-level token'],
    ['PORT', 'eighty', 'must be a port number'],
    ['PORT', '70000', 'must be a port number'],
    ['PAYMENT_API_URL', 'ftp://files.example', 'must be an http(s) URL'],
    ['PAYMENT_PAY_URL', 'not a url', 'must be an http(s) URL'],
    ['PAYMENT_API_TIMEOUT_MS', '5', 'must be 100..120000'],
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
