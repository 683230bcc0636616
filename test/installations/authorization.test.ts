import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { webApi } from '@slack/bolt';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/database.js';
import {
  CLIENT,
  installRotating,
  refreshesByToken,
  rotationInstance,
  startRotationSlack,
} from '../support/rotating-installs.js';
import type { SlackStandIn } from '../support/slack-stand-in.js';

const dir = mkdtempSync(join(tmpdir(), 'bot-authorization-'));
let slack: SlackStandIn;
let store: Store;
beforeAll(async () => {
  slack = await startRotationSlack();
});
afterAll(async () => {
  await slack.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  store = await openStore({ kind: 'sqlite', path: join(dir, `${Date.now()}-${Math.random()}.sqlite`) });
});
afterEach(async () => {
  await store.close();
});

const orgSource = (teamId: string) => ({ teamId, enterpriseId: 'E0GRID', isEnterpriseInstall: true });

describe('token rotation', () => {
  it('serves each workspace of an organisation with its own team while one refresh serves them all', async () => {
    const bot = rotationInstance(store, slack, 'instance-1');
    await installRotating(slack, bot.installations, 'E0GRID', { org: true });
    const installation = await bot.installations.summaryOf('E0GRID');
    if (!installation) throw new Error('not installed');

    const [one, two, three] = await Promise.all(
      ['T0WSONE', 'T0WSTWO', 'T0WSTHREE'].map((team) => bot.authorizationOf(installation, orgSource(team))),
    );
    expect([one?.teamId, two?.teamId, three?.teamId]).toEqual(['T0WSONE', 'T0WSTWO', 'T0WSTHREE']);
    for (const result of [one, two, three]) {
      expect(result?.enterpriseId).toBe('E0GRID');
      expect(result?.botToken).toMatch(/^xoxe\.xoxb-rotated-/);
    }
    expect(refreshesByToken(slack).get('xoxe-1-E0GRID-first-refresh')).toBe(1);
  });

  it('serves a request with the token it has while that is still good, when Slack refuses the refresh', async () => {
    const bot = rotationInstance(store, slack, 'instance-1');
    await installRotating(slack, bot.installations, 'T0REFUSED', { expiresIn: 3600 });
    const installation = await bot.installations.summaryOf('T0REFUSED');
    if (!installation) throw new Error('not installed');
    // Someone else used the refresh token: Slack answers invalid_refresh_token.
    await new webApi.WebClient(undefined, { slackApiUrl: slack.apiUrl }).oauth.v2.access({
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
      grant_type: 'refresh_token',
      refresh_token: 'xoxe-1-T0REFUSED-first-refresh',
    });
    const result = await bot.authorizationOf(installation, {
      teamId: 'T0REFUSED',
      enterpriseId: undefined,
      isEnterpriseInstall: false,
    });
    expect(result.botToken).toBe('xoxe.xoxb-T0REFUSED-first-token');
    expect(result.teamId).toBe('T0REFUSED');
    // Nothing holds the refresh: the next request may try again at once.
    await bot.authorizationOf(installation, {
      teamId: 'T0REFUSED',
      enterpriseId: undefined,
      isEnterpriseInstall: false,
    });
    expect(refreshesByToken(slack).get('xoxe-1-T0REFUSED-first-refresh')).toBe(3);
  });
});
