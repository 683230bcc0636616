import { describe, expect, it } from 'vitest';
import { Inflight } from '../../src/inflight.js';
import { appUninstalled } from '../../src/listeners/workspaces/app-uninstalled.js';
import { tokensRevoked } from '../../src/listeners/workspaces/tokens-revoked.js';
import { eventListener } from '../../src/pipeline/kinds.js';
import { captureLogs } from '../support/bolt.js';

/**
 * What an operator reads of `app_uninstalled` and `tokens_revoked`: the request line's outcome,
 * each try that failed, and nothing deleted or forgotten for an event that names no workspace.
 */

/** Runs `event` through the real request wrapper; the log, and the installations the store was asked about. */
async function handleEvent(
  name: 'app_uninstalled' | 'tokens_revoked',
  args: { event: Record<string, unknown>; context: Record<string, unknown> },
  opts: { storeFails?: number } = {},
) {
  const logs = captureLogs();
  const asked: string[] = [];
  let failures = opts.storeFails ?? 0;
  const store = async (id: string) => {
    asked.push(id);
    if (failures > 0) {
      failures -= 1;
      throw new Error('the store is not answering');
    }
    return true;
  };
  const deps = {
    logger: logs.logger,
    forget: (id: string) => asked.push(`forget ${id}`),
    wait: async () => undefined,
    installations: { uninstall: store, forgetBotToken: async (id: string) => void (await store(id)) },
  };
  const handler = name === 'app_uninstalled' ? appUninstalled(deps) : tokensRevoked(deps);
  const body = { team_id: 'T0GONE', event: args.event };
  const listener = eventListener({ logger: logs.logger, inflight: new Inflight() }, name, handler as never);
  await listener({ ...args, body } as never);
  const request = logs.lines.find((l) => l.msg === `event ${name}`);
  return { lines: logs.lines, request, asked };
}

const team = { teamId: 'T0GONE', isEnterpriseInstall: false };

describe('app_uninstalled, as the log tells it', () => {
  it('records the request as ok once the installation is deleted', async () => {
    const { request, asked } = await handleEvent('app_uninstalled', {
      event: { type: 'app_uninstalled' },
      context: team,
    });
    expect(request).toMatchObject({ level: 'info', outcome: 'ok', team: 'T0GONE' });
    expect(asked).toEqual(['T0GONE', 'forget T0GONE']);
  });

  it('warns of each failed try with the error and the installation, and records internal_error when all fail', async () => {
    const { lines, request } = await handleEvent(
      'app_uninstalled',
      { event: { type: 'app_uninstalled' }, context: team },
      { storeFails: 4 },
    );
    const warnings = lines.filter((l) => l.level === 'warn');
    expect(warnings).toHaveLength(3);
    expect(warnings[0]).toMatchObject({
      msg: 'could not delete an uninstalled installation yet; trying again',
      installation: 'T0GONE',
      err: { message: 'the store is not answering' },
    });
    expect(request).toMatchObject({ outcome: 'internal_error' });
  });

  it('deletes and forgets nothing when the event names no workspace', async () => {
    const { request, asked } = await handleEvent('app_uninstalled', {
      event: { type: 'app_uninstalled' },
      context: {},
    });
    expect(asked).toEqual([]);
    expect(request).toMatchObject({ outcome: 'ok' });
  });
});

describe('tokens_revoked, as the log tells it', () => {
  it('records the request as ok once the bot token is forgotten', async () => {
    const { request, asked, lines } = await handleEvent('tokens_revoked', {
      event: { type: 'tokens_revoked', tokens: { bot: ['U0BOTGONE'] } },
      context: team,
    });
    expect(asked).toEqual(['T0GONE', 'forget T0GONE']);
    expect(lines.find((l) => l.msg === 'bot token revoked: forgotten')).toMatchObject({
      level: 'info',
      installation: 'T0GONE',
    });
    expect(request).toMatchObject({ outcome: 'ok' });
  });

  it('forgets nothing, and is ok, for an event that lists no tokens at all', async () => {
    const { request, asked } = await handleEvent('tokens_revoked', {
      event: { type: 'tokens_revoked' },
      context: team,
    });
    expect(asked).toEqual([]);
    expect(request).toMatchObject({ outcome: 'ok' });
  });

  it('forgets nothing when the event names no workspace', async () => {
    const { request, asked } = await handleEvent('tokens_revoked', {
      event: { type: 'tokens_revoked', tokens: { bot: ['U0BOTGONE'] } },
      context: {},
    });
    expect(asked).toEqual([]);
    expect(request).toMatchObject({ outcome: 'ok' });
  });
});
