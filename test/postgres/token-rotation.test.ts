import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openStore, type Store } from '../../src/store/database.js';
import { installationId } from '../../src/store/keys.js';
import { freshDatabase } from '../support/postgres-server.js';
import {
  installRotating,
  refreshesByToken,
  rotationInstance,
  startRotationSlack,
} from '../support/rotating-installs.js';
import type { SlackStandIn } from '../support/slack-stand-in.js';

/** Workspaces whose rotating tokens all fall due at once: a restart after downtime. */
const WORKSPACES = 50;
/** Slack's deadline for acknowledging a request. */
const ACK_MS = 3000;

let slack: SlackStandIn;
const stores: Store[] = [];
beforeAll(async () => {
  slack = await startRotationSlack();
});
afterAll(async () => {
  for (const store of stores) await store.close();
  await slack.close();
});

describe('token rotation on PostgreSQL, two instances', () => {
  it(`answers ${WORKSPACES} workspaces refreshing at once within Slack's 3 s, each token refreshed once, with pools of 10`, async () => {
    const url = await freshDatabase(inject('postgresUrl'));
    for (let i = 0; i < 2; i += 1) stores.push(await openStore({ kind: 'postgres', url, poolSize: 10 }));
    const [a, b] = stores.map((store, i) => rotationInstance(store, slack, `instance-${i + 1}`));
    if (!a || !b) throw new Error('two instances');
    const ids = Array.from({ length: WORKSPACES }, (_, i) =>
      installationId(`T0ROT${String(i).padStart(2, '0')}`),
    );
    for (const id of ids) await installRotating(slack, a.installations, id);

    const started = performance.now();
    const answered = await Promise.all(
      ids.flatMap((id) =>
        [a, b].map(async (instance) => {
          const installation = await instance.installations.summaryOf(id);
          if (!installation) throw new Error(`${id} is not installed`);
          const result = await instance.authorizationOf(installation, {
            teamId: id,
            enterpriseId: undefined,
            isEnterpriseInstall: false,
          });
          return { id, token: result.botToken, ms: performance.now() - started };
        }),
      ),
    );
    const slowest = Math.max(...answered.map((r) => r.ms));
    console.info(
      `${answered.length} authorizations of ${WORKSPACES} workspaces refreshing at once: slowest ${Math.round(slowest)} ms`,
    );
    expect(slowest).toBeLessThan(ACK_MS);
    const refreshes = refreshesByToken(slack);
    for (const id of ids) expect(refreshes.get(`xoxe-1-${id}-first-refresh`), id).toBe(1);
    // Every answer carries a token Slack accepts now: the refreshed one.
    for (const r of answered) expect(r.token, r.id).toMatch(/^xoxe\.xoxb-rotated-/);
  });
});
