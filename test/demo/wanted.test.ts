import { describe, expect, it } from 'vitest';
import { SLACK_SETTINGS, wantsDemo } from '../../src/demo/wanted.js';

/** What npm puts in the environment of `npm start`. */
const NPM_START = { npm_lifecycle_event: 'start' };

describe('wantsDemo', () => {
  it('runs the demo under npm start when no Slack setting is set, and blank ones count as unset', () => {
    expect(wantsDemo(NPM_START)).toBe(true);
    expect(
      wantsDemo({
        ...NPM_START,
        SLACK_BOT_TOKEN: '',
        SLACK_APP_TOKEN: '  ',
        PAYMENT_API_URL: 'https://x.example',
      }),
    ).toBe(true);
  });

  it.each(SLACK_SETTINGS)('starts the bot as always once %s is set', (name) => {
    expect(wantsDemo({ ...NPM_START, [name]: 'something' })).toBe(false);
  });

  it('never runs the demo in production', () => {
    expect(wantsDemo({ ...NPM_START, NODE_ENV: 'production' })).toBe(false);
    expect(wantsDemo({ ...NPM_START, NODE_ENV: 'development' })).toBe(true);
  });

  it('never runs the demo from a bare node dist/main.js (a service or a container), nor another npm script', () => {
    expect(wantsDemo({})).toBe(false);
    expect(wantsDemo({ npm_lifecycle_event: 'dev' })).toBe(false);
  });
});
