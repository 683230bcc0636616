import type { App, Middleware } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { Inflight } from '../../src/inflight.js';
import { notConnectedHandlers, registerListeners, workspaceRoutes } from '../../src/listeners/index.js';
import { routeKey } from '../../src/listeners/router.js';
import { type AnyRoute, ROUTES } from '../../src/listeners/routes.js';
import { captureLogs, recordingResponseUrls } from '../support/bolt.js';

/** The body Slack sends for a route, by its kind and name (what the router classifies). */
function bodyOf({ kind, name }: AnyRoute): Record<string, unknown> {
  const user = { id: 'U0MEMBER' };
  switch (kind) {
    case 'command':
      return { command: name };
    case 'action':
      return { type: 'block_actions', actions: [{ action_id: name }], user };
    case 'shortcut':
      return { type: 'message_action', callback_id: name, user, channel: { id: 'C0' } };
    case 'view':
      return { type: 'view_submission', view: { callback_id: name }, user };
    case 'function':
      return {
        type: 'event_callback',
        event: { type: 'function_executed', function: { callback_id: name } },
      };
    case 'event':
      return { type: 'event_callback', team_id: 'T0', event: { type: name } };
  }
}

/** Bolt's arguments for a route's request, with what each kind's handler reads. */
function requestOf(route: AnyRoute) {
  const body = bodyOf(route);
  return {
    body,
    context: { teamId: 'T0' },
    ack: async () => undefined,
    respond: async () => undefined,
    command: { command: route.name, text: '', user_id: 'U0MEMBER', team_id: 'T0', channel_id: 'C0' },
    shortcut: { response_url: undefined },
    event: { ...(body.event as object), user: 'U0MEMBER', tab: 'home', channel: 'D0' },
    fail: async () => undefined,
    client: { entity: { presentDetails: async () => ({ ok: true }) } },
    next: async () => {
      throw new Error('the router passes nothing on');
    },
  };
}

/** The one router over a workspace that is not connected, and a record of what `more` was sent. */
function notConnectedBot() {
  const logs = captureLogs();
  const deps = {
    logger: logs.logger,
    inflight: new Inflight(),
    fastPathMs: 1500,
    responseUrls: recordingResponseUrls,
  };
  const middlewares: Middleware<never>[] = [];
  const app = { use: (m: Middleware<never>) => middlewares.push(m) } as unknown as App;
  const homes: string[] = [];
  const handlers = notConnectedHandlers(deps, 'U0INSTALLER', async ({ event }) => {
    homes.push(event.user);
  });
  const sentToMore: string[] = [];
  const more = Object.fromEntries(
    Object.keys(workspaceRoutes({} as never)).map((key) => [
      key,
      async () => {
        sentToMore.push(key);
      },
    ]),
  );
  registerListeners(app, deps, async () => handlers, more);
  const send = (route: AnyRoute) => (middlewares[0] as (a: unknown) => Promise<void>)(requestOf(route));
  return { send, logs, homes, sentToMore };
}

describe('the one list of routes', () => {
  it('names each kind and name once', () => {
    const keys = ROUTES.map((r) => routeKey(r));
    expect(new Set(keys).size).toBe(keys.length);
  });

  it.each(ROUTES.filter((r) => r.of === 'installation').map((r) => [routeKey(r), r] as const))(
    'routes %s to its installation, which answers it while not connected',
    async (_key, route) => {
      const bot = notConnectedBot();
      await bot.send(route);
      const lines = bot.logs.lines.filter((l) => l.kind === route.kind && l.name === route.name);
      expect(lines).toHaveLength(1);
      expect(['not_connected', 'ok']).toContain(lines[0]?.outcome);
      expect(bot.sentToMore).toEqual([]);
      expect(bot.logs.lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
    },
  );

  it.each(ROUTES.filter((r) => r.of === 'workspaces').map((r) => [routeKey(r), r] as const))(
    'routes %s to many workspaces’ own routes, not to an installation',
    async (key, route) => {
      const bot = notConnectedBot();
      await bot.send(route);
      expect(bot.sentToMore).toEqual([key]);
      expect(bot.logs.lines).toEqual([]);
    },
  );
});
