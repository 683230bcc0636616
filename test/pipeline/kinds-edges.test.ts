import type { SlackEventMiddlewareArgs, SlackViewMiddlewareArgs } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { Inflight } from '../../src/inflight.js';
import { eventListener, viewListener } from '../../src/pipeline/kinds.js';
import { captureLogs } from '../support/bolt.js';

const deps = () => {
  const logs = captureLogs();
  return { logs, deps: { logger: logs.logger, inflight: new Inflight() } };
};

const viewArgs = (user: Record<string, unknown>, team?: { id: string }) =>
  ({
    body: { type: 'view_submission', user, ...(team ? { team } : {}) },
  }) as unknown as SlackViewMiddlewareArgs;

describe('who the log line names', () => {
  it('for a modal’s submission: the person and their own team, else the payload’s team', async () => {
    const { logs, deps: d } = deps();
    const listener = viewListener(d, 'connect_key', async () => ({ outcome: 'ok' }));
    await listener(viewArgs({ id: 'U1', team_id: 'T0OWN' }, { id: 'T0PAYLOAD' }));
    await listener(viewArgs({ id: 'U2' }, { id: 'T0PAYLOAD' }));
    await listener(viewArgs({ id: 'U3' }));
    expect(logs.lines.map((l) => [l.msg, l.user, l.team])).toEqual([
      ['view connect_key', 'U1', 'T0OWN'],
      ['view connect_key', 'U2', 'T0PAYLOAD'],
      ['view connect_key', 'U3', undefined],
    ]);
  });

  it('for an event: the person and channel only when the event names them by id', async () => {
    const { logs, deps: d } = deps();
    const listener = eventListener(d, 'user_change', async () => ({ outcome: 'ok' }));
    const args = (event: Record<string, unknown>) =>
      ({ event, body: { team_id: 'T0HOME' } }) as unknown as SlackEventMiddlewareArgs;
    await listener(args({ type: 'user_change', user: { id: 'U1', name: 'ann' }, channel: { id: 'C1' } }));
    await listener(args({ type: 'app_home_opened', user: 'U2', channel: 'D2' }));
    const lines = logs.lines;
    expect(lines[0]).toMatchObject({ msg: 'event user_change', team: 'T0HOME' });
    expect(lines[0]).not.toHaveProperty('user');
    expect(lines[0]).not.toHaveProperty('channel');
    expect(lines[1]).toMatchObject({ user: 'U2', channel: 'D2', team: 'T0HOME' });
  });
});
