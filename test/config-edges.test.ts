import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, loadSetup } from '../src/config.js';

const one = {
  SLACK_BOT_TOKEN: 'xoxb-111-222-abcdef',
  SLACK_SIGNING_SECRET: 'signing-secret-value',
  PAYMENT_API_URL: 'https://api.pay.example',
  PAYMENT_API_KEY: 'api-key-value-123',
};

const many = {
  SLACK_CLIENT_ID: '1234.5678',
  SLACK_CLIENT_SECRET: 'client-secret-value',
  SLACK_STATE_SECRET: 'state-secret-value',
  SLACK_SIGNING_SECRET: 'signing-secret-value',
  ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
  PAYMENT_API_URL: 'https://api.pay.example',
};

function problems(load: () => unknown): string[] {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  return [];
}

describe('configuration messages an operator reads', () => {
  it('says what METRICS_PORT must be', () => {
    expect(problems(() => loadConfig({ ...one, METRICS_PORT: 'nine' }))).toEqual([
      'METRICS_PORT: must be a port number (digits only)',
    ]);
    expect(problems(() => loadConfig({ ...one, METRICS_PORT: '0' }))).toEqual([
      'METRICS_PORT: must be a port number from 1 to 65535',
    ]);
  });

  it('says what DATABASE_POOL_SIZE must be', () => {
    expect(problems(() => loadConfig({ ...one, DATABASE_POOL_SIZE: 'lots' }))).toEqual([
      'DATABASE_POOL_SIZE: must be connections (digits only)',
    ]);
  });

  it('replies in the channel unless told otherwise, and says what INVOICE_REPLY may be', () => {
    expect(loadConfig(one).invoiceReply).toBe('in_channel');
    expect(loadConfig({ ...one, INVOICE_REPLY: 'ephemeral' }).invoiceReply).toBe('ephemeral');
    expect(problems(() => loadConfig({ ...one, INVOICE_REPLY: 'whisper' }))).toEqual([
      'INVOICE_REPLY: must be in_channel or ephemeral',
    ]);
  });

  it('refuses a SQLite path that runs onto a second line', () => {
    expect(problems(() => loadConfig({ ...one, DATABASE_URL: 'file:./data/a\nb.sqlite' }))).toEqual([
      'DATABASE_URL: must be postgres://…, postgresql://… or file:<path>',
    ]);
    expect(loadConfig({ ...one, DATABASE_URL: 'file:./data/a.sqlite' }).database).toEqual({
      kind: 'sqlite',
      path: './data/a.sqlite',
    });
  });

  it('says ENCRYPTION_KEY is required when many workspaces are served without one', () => {
    const { ENCRYPTION_KEY: _unused, ...withoutKey } = many;
    expect(problems(() => loadSetup(withoutKey))).toEqual(['ENCRYPTION_KEY: is required']);
    expect(problems(() => loadSetup({ ...many, ENCRYPTION_KEY: 'short' }))).toEqual([
      'ENCRYPTION_KEY: must be 32 random bytes in base64 (README shows how to make one)',
    ]);
  });

  it('refuses SLACK_APP_TOKEN when many workspaces are served', () => {
    expect(problems(() => loadSetup({ ...many, SLACK_APP_TOKEN: 'xapp-1-abcdefgh' }))).toEqual([
      'SLACK_APP_TOKEN: is for Socket Mode, which serves one workspace: unset it',
    ]);
  });
});
