import { describe, expect, it } from 'vitest';
import { failureOfCode } from '../../src/slack/error-codes.js';

describe('Slack’s codes, for a method with no list of its own', () => {
  it('reads them as every method does, and an unlisted one as worth another try', () => {
    expect(failureOfCode('users.info', 'ratelimited')).toBe('rate_limited');
    expect(failureOfCode('views.publish', 'token_revoked')).toBe('refused');
    expect(failureOfCode('response_url', 'something_new')).toBe('transient');
  });
});
