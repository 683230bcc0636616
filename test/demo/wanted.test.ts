import { describe, expect, it } from 'vitest';
import { SLACK_SETTINGS, wantsDemo } from '../../src/demo/wanted.js';

describe('wantsDemo', () => {
  it('runs the demo when no Slack setting is set, and blank ones count as unset', () => {
    expect(wantsDemo({})).toBe(true);
    expect(
      wantsDemo({ SLACK_BOT_TOKEN: '', SLACK_APP_TOKEN: '  ', PAYMENT_API_URL: 'https://x.example' }),
    ).toBe(true);
  });

  it.each(SLACK_SETTINGS)('starts the bot as always once %s is set', (name) => {
    expect(wantsDemo({ [name]: 'something' })).toBe(false);
  });

  it('never runs the demo in production', () => {
    expect(wantsDemo({ NODE_ENV: 'production' })).toBe(false);
    expect(wantsDemo({ NODE_ENV: 'development' })).toBe(true);
  });
});
