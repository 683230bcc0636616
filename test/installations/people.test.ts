import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Inflight } from '../../src/inflight.js';
import { createCommon, slackClientOptions } from '../../src/installations/tenant.js';
import { CircuitBreaker } from '../../src/payments/index.js';
import type { Store } from '../../src/store/database.js';
import { installationId } from '../../src/store/keys.js';
import { captureLogs, TEST_WATCH_SETTINGS } from '../support/bolt.js';
import { type SlackStandIn, startSlackStandIn } from '../support/slack-stand-in.js';

let slack: SlackStandIn;
beforeAll(async () => {
  slack = await startSlackStandIn({ teamId: 'T0A', botToken: 'xoxb-a' });
});
afterAll(() => slack.close());

/** What every installation shares, its Web API calls going to the stand-in; `slackCalls` as the metrics count them. */
function common() {
  const slackCalls: string[] = [];
  const built = createCommon({
    settings: {
      invoiceReply: 'in_channel',
      watches: TEST_WATCH_SETTINGS,
      balancePollSeconds: 60,
      payments: { payUrl: undefined, timeoutMs: 2000 },
    },
    logger: captureLogs().logger,
    // Nothing here reads or writes the store.
    store: {} as Store,
    metrics: {
      request: () => undefined,
      slackCall: (method, result, installation) =>
        void slackCalls.push(`${method}:${result}:${installation}`),
    },
    breaker: new CircuitBreaker(),
    inflight: new Inflight(),
    clock: Date.now,
    owner: 'test',
    clientOptions: slackClientOptions({ slack: { apiUrl: slack.apiUrl } }),
    wakeOutbox: () => undefined,
  });
  return { ...built, slackCalls };
}

describe('an installation’s people (Slack’s directory, kept with its row)', () => {
  it('are looked up with its own token, counted as its own, and a 429 to one installation never holds up another’s', async () => {
    const { directoryOf, slackCalls } = common();
    slack.rateLimitNext('users.info', 2);
    // Slack asks A to wait 2 s: its look-up waits, then asks again.
    const waiting = directoryOf(installationId('A'), 'xoxb-a')('U0AONE');
    await expect.poll(() => slack.calls.filter((c) => c.method === 'users.info').length).toBe(1);
    const started = Date.now();
    expect(await directoryOf(installationId('B'), 'xoxb-b')('U0BTWO')).toMatchObject({ teamId: 'T0A' });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await waiting).toMatchObject({ teamId: 'T0A' });
    const asked = slack.calls.filter((c) => c.method === 'users.info');
    expect(asked.map((c) => [c.args.user, c.token])).toEqual([
      ['U0AONE', 'xoxb-a'],
      ['U0BTWO', 'xoxb-b'],
      ['U0AONE', 'xoxb-a'],
    ]);
    expect(slackCalls).toEqual(['users.info:ok:B', 'users.info:ok:A']);
  });
});
