import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { webApi } from '@slack/bolt';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { claimRefresh } from '../../src/runner/refresh-lease.js';
import { openStore, type Store } from '../../src/store/database.js';
import { NoInstallationError } from '../../src/store/installations.js';
import { installationId } from '../../src/store/keys.js';
import { captureLogs } from '../support/bolt.js';
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
    const installation = await bot.installations.summaryOf(installationId('E0GRID'));
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
    const installation = await bot.installations.summaryOf(installationId('T0REFUSED'));
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

  it('waits for another instance’s refresh of a token in its last minute, and serves the new one', async () => {
    const bot = rotationInstance(store, slack, 'instance-1');
    await installRotating(slack, bot.installations, 'T0WAIT', { expiresIn: 30 });
    const installation = await bot.installations.summaryOf(installationId('T0WAIT'));
    if (!installation?.tokenExpiresAt) throw new Error('not installed');
    expect(await claimRefresh(store, installationId('T0WAIT'), 'instance-2', Date.now(), 30_000)).toBe(true);
    const started = performance.now();
    const asked = bot.authorizationOf(installation, source('T0WAIT'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The other instance keeps the token it got from Slack.
    const refreshed = await bot.installations.fetchInstallation(source('T0WAIT'));
    const bot2 = refreshed.bot as NonNullable<typeof refreshed.bot>;
    const newer = {
      ...refreshed,
      bot: {
        ...bot2,
        token: 'xoxe.xoxb-from-the-other-instance',
        expiresAt: (bot2.expiresAt as number) + 43_200,
      },
    };
    expect(await bot.installations.storeRefreshed(newer, bot2.expiresAt)).toBe(true);
    expect((await asked).botToken).toBe('xoxe.xoxb-from-the-other-instance');
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(300);
    // Served once the new token is there, not after the 2 s a request may wait.
    expect(waited).toBeLessThan(1900);
    expect(refreshesByToken(slack).get('xoxe-1-T0WAIT-first-refresh')).toBeUndefined();
  });

  it('gives up waiting after 2 s and goes on with the token it has', async () => {
    const bot = rotationInstance(store, slack, 'instance-1');
    await installRotating(slack, bot.installations, 'T0SLOWPEER', { expiresIn: 30 });
    const installation = await bot.installations.summaryOf(installationId('T0SLOWPEER'));
    if (!installation) throw new Error('not installed');
    await claimRefresh(store, installationId('T0SLOWPEER'), 'instance-2', Date.now(), 30_000);
    const started = performance.now();
    expect((await bot.authorizationOf(installation, source('T0SLOWPEER'))).botToken).toBe(
      'xoxe.xoxb-T0SLOWPEER-first-token',
    );
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(1900);
    expect(waited).toBeLessThan(5000);
  });

  it('goes on at once with a token good for an hour yet while another instance refreshes it', async () => {
    const bot = rotationInstance(store, slack, 'instance-1');
    await installRotating(slack, bot.installations, 'T0HOUR', { expiresIn: 3600 });
    const installation = await bot.installations.summaryOf(installationId('T0HOUR'));
    if (!installation) throw new Error('not installed');
    await claimRefresh(store, installationId('T0HOUR'), 'instance-2', Date.now(), 30_000);
    const started = performance.now();
    const result = await bot.authorizationOf(installation, source('T0HOUR'));
    // Not the 2 s a request waits for a token in its last minute.
    expect(performance.now() - started).toBeLessThan(1000);
    expect(result).toMatchObject({
      botToken: 'xoxe.xoxb-T0HOUR-first-token',
      botRefreshToken: 'xoxe-1-T0HOUR-first-refresh',
      botId: 'B0BOT',
      botUserId: 'U0BOT',
      teamId: 'T0HOUR',
    });
    expect(refreshesByToken(slack).get('xoxe-1-T0HOUR-first-refresh')).toBeUndefined();
  });

  it('asks Slack nothing for a token that expires in more than two hours', async () => {
    const bot = rotationInstance(store, slack, 'instance-1');
    await installRotating(slack, bot.installations, 'T0LATER', { expiresIn: 3 * 3600 });
    const installation = await bot.installations.summaryOf(installationId('T0LATER'));
    if (!installation) throw new Error('not installed');
    expect((await bot.authorizationOf(installation, source('T0LATER'))).botToken).toBe(
      'xoxe.xoxb-T0LATER-first-token',
    );
    expect(refreshesByToken(slack).get('xoxe-1-T0LATER-first-refresh')).toBeUndefined();
  });

  it('keeps no refreshed token over a revocation that came while Slack answered, and says so', async () => {
    const logs = captureLogs();
    const bot = rotationInstance(store, slack, 'instance-1', { logger: logs.logger });
    await installRotating(slack, bot.installations, 'T0REVOKED', { expiresIn: 60 });
    const installation = await bot.installations.summaryOf(installationId('T0REVOKED'));
    if (!installation) throw new Error('not installed');
    slack.answerLate('oauth.v2.access', 300);
    const asked = bot.authorizationOf(installation, source('T0REVOKED')).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await bot.installations.forgetBotToken(installationId('T0REVOKED'));
    expect(await asked).toBeInstanceOf(NoInstallationError);
    expect(logs.lines.map((l) => l.msg)).toContain(
      'a refreshed bot token was not kept: the installation changed meanwhile (another refresh, a revocation or an uninstall)',
    );
    expect((await bot.installations.summaryOf(installationId('T0REVOKED')))?.tokenExpiresAt).toBeUndefined();
  });
});

const source = (teamId: string) => ({ teamId, enterpriseId: undefined, isEnterpriseInstall: false });
