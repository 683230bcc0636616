import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Installation } from '@slack/bolt';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { claimRefresh } from '../../src/runner/refresh-lease.js';
import { openStore, type Store } from '../../src/store/database.js';
import { type Installations, NoInstallationError } from '../../src/store/installations.js';
import { type InstallationId, installationId } from '../../src/store/keys.js';
import { captureLogs } from '../support/bolt.js';
import {
  installRotating,
  type RotationOptions,
  refreshesByToken,
  rotationInstance,
  startRotationSlack,
} from '../support/rotating-installs.js';
import type { SlackStandIn } from '../support/slack-stand-in.js';

/**
 * Token rotation at its edges, with the clock and the waits in the test's hands: where the two
 * hours before expiry begin, how long a request waits for another instance, what a failed
 * refresh leaves, and what concurrent requests of one process are served.
 */

const dir = mkdtempSync(join(tmpdir(), 'bot-rotation-edges-'));
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

const HOUR = 60 * 60_000;
const teamSource = (teamId: string) => ({ teamId, enterpriseId: undefined, isEnterpriseInstall: false });

/** One instance's token rotation (test/support/rotating-installs.ts) over this test's store. */
const instance = (options: RotationOptions = {}) => rotationInstance(store, slack, 'instance-1', options);

/** The store's installations, whose first `times` writes of a refreshed token fail as with the database gone. */
const writesFailing =
  (times: number): RotationOptions['installations'] =>
  (real) => {
    let failures = times;
    return {
      ...real,
      storeRefreshed: async (...args) => {
        if (failures-- > 0) throw new Error('the database is unreachable');
        return real.storeRefreshed(...args);
      },
    };
  };

async function summary(installations: Installations, id: InstallationId) {
  const found = await installations.summaryOf(id);
  if (found?.tokenExpiresAt === undefined) throw new Error(`${id} is not installed with a rotating token`);
  return { ...found, tokenExpiresAt: found.tokenExpiresAt };
}

const refreshLeases = () =>
  store.db.selectFrom('singletons').select('installation_id').where('name', '=', 'token_refresh').execute();

describe('where the two hours before expiry begin', () => {
  it('asks Slack nothing for a token exactly two hours from expiry, and refreshes it a millisecond later', async () => {
    // Slack's own check (real time) would refresh: only the bot's clock decides.
    const atTwoHours = instance();
    await installRotating(slack, atTwoHours.installations, 'T0EDGE', { expiresIn: 60 });
    const installation = await summary(atTwoHours.installations, installationId('T0EDGE'));
    const twoHoursBefore = installation.tokenExpiresAt - 2 * HOUR;

    const onTheEdge = instance({ clock: () => twoHoursBefore });
    expect((await onTheEdge.authorizationOf(installation, teamSource('T0EDGE'))).botToken).toBe(
      'xoxe.xoxb-T0EDGE-first-token',
    );
    expect(refreshesByToken(slack).get('xoxe-1-T0EDGE-first-refresh')).toBeUndefined();

    const justInside = instance({ clock: () => twoHoursBefore + 1 });
    expect((await justInside.authorizationOf(installation, teamSource('T0EDGE'))).botToken).toMatch(
      /^xoxe\.xoxb-rotated-/,
    );
    expect(refreshesByToken(slack).get('xoxe-1-T0EDGE-first-refresh')).toBe(1);
  });

  it('takes no refresh lease in the store for a token good for hours yet', async () => {
    const bot = instance();
    await installRotating(slack, bot.installations, 'T0HOURS', { expiresIn: 3 * 3600 });
    const installation = await summary(bot.installations, installationId('T0HOURS'));
    expect((await bot.authorizationOf(installation, teamSource('T0HOURS'))).botToken).toBe(
      'xoxe.xoxb-T0HOURS-first-token',
    );
    expect(await refreshLeases()).toEqual([]);

    // A token inside the two hours does take one (released, the row stays): the check above can fail.
    await installRotating(slack, bot.installations, 'T0SOON', { expiresIn: 3600 });
    await bot.authorizationOf(
      await summary(bot.installations, installationId('T0SOON')),
      teamSource('T0SOON'),
    );
    expect(await refreshLeases()).toEqual([{ installation_id: 'T0SOON' }]);
  });
});

describe('waiting for another instance’s refresh', () => {
  it('waits 2 s in all, looking every 100 ms, then goes on with the token it has', async () => {
    const slept: number[] = [];
    const bot = instance({
      sleep: async (ms) => {
        slept.push(ms);
      },
    });
    await installRotating(slack, bot.installations, 'T0PEER', { expiresIn: 30 });
    const installation = await summary(bot.installations, installationId('T0PEER'));
    expect(await claimRefresh(store, installationId('T0PEER'), 'instance-2', Date.now(), 30_000)).toBe(true);

    expect((await bot.authorizationOf(installation, teamSource('T0PEER'))).botToken).toBe(
      'xoxe.xoxb-T0PEER-first-token',
    );
    expect(slept.reduce((a, b) => a + b, 0)).toBe(2000);
    expect(new Set(slept)).toEqual(new Set([100]));
    expect(refreshesByToken(slack).get('xoxe-1-T0PEER-first-refresh')).toBeUndefined();
  });

  it('stops waiting at once when the workspace is uninstalled meanwhile, and says there is no installation', async () => {
    let looks = 0;
    let uninstall = async () => {};
    const bot = instance({
      sleep: async () => {
        looks += 1;
        await uninstall();
      },
    });
    await installRotating(slack, bot.installations, 'T0GONE', { expiresIn: 30 });
    const installation = await summary(bot.installations, installationId('T0GONE'));
    await claimRefresh(store, installationId('T0GONE'), 'instance-2', Date.now(), 30_000);
    uninstall = async () => {
      await bot.installations.uninstall(installationId('T0GONE'), Date.now());
    };

    await expect(bot.authorizationOf(installation, teamSource('T0GONE'))).rejects.toBeInstanceOf(
      NoInstallationError,
    );
    expect(looks).toBe(1);
  });
});

describe('a refresh that fails or is not kept', () => {
  it('keeps a refreshed token the store could not write: serves it, never sends the replaced refresh token, and writes it at a later request', async () => {
    const logs = captureLogs();
    const bot = instance({ logger: logs.logger, installations: writesFailing(2) });
    await installRotating(slack, bot.installations, 'T0NOSTORE', { expiresIn: 60 });
    const installation = await summary(bot.installations, installationId('T0NOSTORE'));
    const refreshCalls = () => slack.calls.filter((c) => c.args.grant_type === 'refresh_token').length;
    const refreshesBefore = refreshCalls();
    const stored = async () =>
      (await bot.installations.fetchInstallation(teamSource('T0NOSTORE'))).bot?.token;

    // The refresh's write fails, then the second request's: both are served the new token.
    const first = await bot.authorizationOf(installation, teamSource('T0NOSTORE'));
    expect(first.botToken).toMatch(/^xoxe\.xoxb-rotated-/);
    const second = await bot.authorizationOf(installation, teamSource('T0NOSTORE'));
    expect(second.botToken).toBe(first.botToken);
    expect(await stored()).toBe('xoxe.xoxb-T0NOSTORE-first-token');
    // No other instance refreshes with the replaced refresh token meanwhile: the lease is held.
    expect(await claimRefresh(store, installationId('T0NOSTORE'), 'instance-2', Date.now(), 30_000)).toBe(
      false,
    );
    const warnings = logs.lines.filter((l) =>
      String(l.msg).startsWith('a refreshed bot token could not be stored'),
    );
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatchObject({ level: 'warn', installation: 'T0NOSTORE' });
    expect(JSON.stringify(warnings)).not.toContain(first.botToken);

    // The third request's write holds: the store has the new token, and the lease is free again.
    expect((await bot.authorizationOf(installation, teamSource('T0NOSTORE'))).botToken).toBe(first.botToken);
    expect(await stored()).toBe(first.botToken);
    expect(await claimRefresh(store, installationId('T0NOSTORE'), 'instance-2', Date.now(), 30_000)).toBe(
      true,
    );
    // One refresh in all, with the refresh token Slack had handed out.
    expect(refreshCalls() - refreshesBefore).toBe(1);
    expect(refreshesByToken(slack).get('xoxe-1-T0NOSTORE-first-refresh')).toBe(1);
  });

  it('writes a refreshed token the store could not keep again shortly, with no request, holding the refresh lease meanwhile', async () => {
    const logs = captureLogs();
    const bot = instance({ logger: logs.logger, retryWriteMs: 200, installations: writesFailing(1) });
    await installRotating(slack, bot.installations, 'T0RETRY', { expiresIn: 60 });
    const installation = await summary(bot.installations, installationId('T0RETRY'));
    const { botToken } = await bot.authorizationOf(installation, teamSource('T0RETRY'));
    expect(await claimRefresh(store, installationId('T0RETRY'), 'instance-2', Date.now(), 30_000)).toBe(
      false,
    );
    const stored = async () => (await bot.installations.fetchInstallation(teamSource('T0RETRY'))).bot?.token;
    await expect.poll(stored, { timeout: 3000 }).toBe(botToken);
    await expect
      .poll(() => claimRefresh(store, installationId('T0RETRY'), 'instance-2', Date.now(), 30_000))
      .toBe(true);
  });

  it('warns naming the installation whose refreshed token was not kept over a revocation', async () => {
    const logs = captureLogs();
    const bot = instance({ logger: logs.logger });
    await installRotating(slack, bot.installations, 'T0REVOKEDTOO', { expiresIn: 60 });
    const installation = await summary(bot.installations, installationId('T0REVOKEDTOO'));
    slack.answerLate('oauth.v2.access', 300);
    const asked = bot.authorizationOf(installation, teamSource('T0REVOKEDTOO')).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await bot.installations.forgetBotToken(installationId('T0REVOKEDTOO'));
    expect(await asked).toBeInstanceOf(NoInstallationError);
    expect(logs.lines.filter((l) => String(l.msg).startsWith('a refreshed bot token was not kept'))).toEqual([
      expect.objectContaining({ level: 'warn', installation: 'T0REVOKEDTOO' }),
    ]);
  });
});

describe('concurrent requests of one process', () => {
  it('serves both requests of one workspace the refreshed token, one refresh between them', async () => {
    const bot = instance();
    await installRotating(slack, bot.installations, 'T0TWICE', { expiresIn: 3600 });
    const installation = await summary(bot.installations, installationId('T0TWICE'));
    slack.answerLate('oauth.v2.access', 200);
    const [first, second] = await Promise.all([
      bot.authorizationOf(installation, teamSource('T0TWICE')),
      bot.authorizationOf(installation, teamSource('T0TWICE')),
    ]);
    expect(first.botToken).toMatch(/^xoxe\.xoxb-rotated-/);
    expect(second.botToken).toBe(first.botToken);
    expect(refreshesByToken(slack).get('xoxe-1-T0TWICE-first-refresh')).toBe(1);
  });
});

describe('what a request is told about its workspace', () => {
  it('names the organisation of a workspace installed in an Enterprise Grid even when the request does not', async () => {
    const bot = instance();
    await bot.installations.storeInstallation({
      team: { id: 'T0INGRID', name: undefined },
      enterprise: { id: 'E0GRIDORG', name: undefined },
      isEnterpriseInstall: false,
      appId: 'A0APP',
      user: { id: 'U0INGRIDADMIN', token: undefined, scopes: undefined },
      bot: { token: 'xoxb-ingrid-token', scopes: ['commands'], id: 'B0BOT', userId: 'U0BOT' },
      tokenType: 'bot',
      authVersion: 'v2',
    } as Installation);
    const installation = await bot.installations.summaryOf(installationId('T0INGRID'));
    if (!installation) throw new Error('not installed');
    expect(await bot.authorizationOf(installation, teamSource('T0INGRID'))).toMatchObject({
      teamId: 'T0INGRID',
      enterpriseId: 'E0GRIDORG',
      botToken: 'xoxb-ingrid-token',
    });
  });
});
