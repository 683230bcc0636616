import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadSetup } from '../src/config.js';

const key = randomBytes(32);
const many = {
  SLACK_CLIENT_ID: '1234.5678',
  SLACK_CLIENT_SECRET: 'client-secret-value',
  SLACK_STATE_SECRET: 'state-secret-value',
  SLACK_SIGNING_SECRET: 'signing-secret-value',
  ENCRYPTION_KEY: key.toString('base64'),
  PAYMENT_API_URL: 'https://api.pay.example',
};

function problems(env: Record<string, string>): string[] {
  try {
    loadSetup(env);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  return [];
}

describe('loadSetup: one workspace or many, by what is set', () => {
  it('serves one workspace when a bot token is set, exactly as loadConfig reads it', () => {
    const setup = loadSetup({
      SLACK_BOT_TOKEN: 'xoxb-111-222-abcdef',
      SLACK_SIGNING_SECRET: 'signing-secret-value',
      PAYMENT_API_URL: 'https://api.pay.example',
      PAYMENT_API_KEY: 'api-key-value-123',
    });
    expect(setup.tenancy).toBe('one');
  });

  it('refuses a bot token and an OAuth client together, naming both: a switch between modes half made', () => {
    const both = { ...many, SLACK_BOT_TOKEN: 'xoxb-111-222-abcdef', PAYMENT_API_KEY: 'api-key-value-123' };
    expect(problems(both)).toEqual([
      expect.stringMatching(
        /^SLACK_BOT_TOKEN and SLACK_CLIENT_ID are both set: .* Leave one of the two empty/,
      ),
    ]);
    expect(loadSetup({ ...both, SLACK_CLIENT_ID: ' ' }).tenancy).toBe('one');
    expect(loadSetup({ ...both, SLACK_BOT_TOKEN: '', PAYMENT_API_KEY: '' }).tenancy).toBe('many');
  });

  it('serves many workspaces with an OAuth client and no bot token, needing no API key', () => {
    const setup = loadSetup(many);
    expect(setup.tenancy).toBe('many');
    if (setup.tenancy !== 'many') return;
    expect(setup.config.slack).toEqual({
      mode: 'http',
      signingSecret: 'signing-secret-value',
      apiUrl: 'https://slack.com/api/',
      clientId: '1234.5678',
      clientSecret: 'client-secret-value',
      stateSecret: 'state-secret-value',
    });
    expect(setup.config.payments).not.toHaveProperty('apiKey');
    expect(setup.config.encryption.current.equals(key)).toBe(true);
    expect(setup.config.encryption.previous).toBeUndefined();
    expect(Object.isFrozen(setup.config)).toBe(true);
  });

  it('reads the previous key, for a rotation', () => {
    const previous = randomBytes(32);
    const setup = loadSetup({ ...many, ENCRYPTION_KEY_PREVIOUS: previous.toString('base64url') });
    expect(setup.tenancy === 'many' && setup.config.encryption.previous?.equals(previous)).toBe(true);
  });

  it('names each missing or malformed value, never the value', () => {
    const found = problems({
      SLACK_CLIENT_ID: '1234.5678',
      SLACK_CLIENT_SECRET: 'short',
      ENCRYPTION_KEY: 'not-a-key-at-all-but-a-secret',
      ENCRYPTION_KEY_PREVIOUS: randomBytes(16).toString('base64'),
      SLACK_APP_TOKEN: 'xapp-1-A0-123-abc',
      PAYMENT_API_URL: 'https://api.pay.example',
    });
    expect(found).toEqual(
      expect.arrayContaining([
        'SLACK_CLIENT_SECRET: must be at least 8 characters',
        'SLACK_STATE_SECRET: is required',
        'SLACK_SIGNING_SECRET: is required',
        'ENCRYPTION_KEY: must be 32 random bytes in base64 (README shows how to make one)',
        'ENCRYPTION_KEY_PREVIOUS: must be 32 random bytes in base64 (README shows how to make one)',
        'SLACK_APP_TOKEN: is for Socket Mode, which serves one workspace: unset it',
      ]),
    );
    expect(found.join('\n')).not.toMatch(/short|not-a-key|xapp-1/);
  });

  it('redacts the OAuth secrets and the keys, in both spellings', () => {
    const setup = loadSetup(many);
    if (setup.tenancy !== 'many') throw new Error('expected many workspaces');
    expect(setup.secrets).toEqual([
      'signing-secret-value',
      'client-secret-value',
      'state-secret-value',
      key.toString('base64'),
      key.toString('base64url'),
    ]);
  });
});
