import { App, type Receiver } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { boltClients } from '../../src/installations/bolt-clients.js';
import { type InstallationId, installationId } from '../../src/store/keys.js';

/** A receiver that receives nothing: the App is made only to look at what it keeps. */
const quiet: Receiver = { init: () => undefined, start: async () => undefined, stop: async () => undefined };

function app() {
  const bolt = new App({ receiver: quiet, authorize: async () => ({}) });
  const pools = (bolt as unknown as { clients: Record<string, unknown> }).clients;
  /** What Bolt does after an authorization: a pool for the team, if it has none. */
  const serve = (
    clients: ReturnType<typeof boltClients>,
    team: string,
    token: string,
    installation: InstallationId,
  ) => {
    clients.served(team, token, installation);
    pools[team] ??= { token };
  };
  return { bolt, pools, serve };
}

describe('Bolt’s Web API clients, per team and token', () => {
  it('are where Bolt keeps them: one pool per team', () => {
    const { pools } = app();
    expect(pools).toEqual({});
  });

  it('keeps one pool a team: a rotated token’s client replaces the one before', () => {
    const { bolt, pools, serve } = app();
    const clients = boltClients(bolt, 10);
    serve(clients, 'T0ONE', 'xoxe.xoxb-first', installationId('T0ONE'));
    const first = pools.T0ONE;
    expect(first).toEqual({ token: 'xoxe.xoxb-first' });
    serve(clients, 'T0ONE', 'xoxe.xoxb-first', installationId('T0ONE'));
    // The same token again: the same pool, not a new one.
    expect(pools.T0ONE).toBe(first);
    serve(clients, 'T0ONE', 'xoxe.xoxb-rotated', installationId('T0ONE'));
    expect(pools.T0ONE).toEqual({ token: 'xoxe.xoxb-rotated' });
    expect(clients.size).toBe(1);
  });

  it('keeps none of an installation forgotten (uninstalled, revoked), every workspace of an organisation included', () => {
    const { bolt, serve } = app();
    const clients = boltClients(bolt, 10);
    for (const team of ['T0WSONE', 'T0WSTWO']) serve(clients, team, 'xoxb-org', installationId('E0GRID'));
    serve(clients, 'T0OTHER', 'xoxb-other', installationId('T0OTHER'));
    clients.forget(installationId('E0GRID'));
    expect(clients.size).toBe(1);
  });

  it('keeps at most `max` teams, the least recently served going first', () => {
    const { bolt, pools, serve } = app();
    const clients = boltClients(bolt, 2);
    serve(clients, 'T1', 'a', installationId('T1'));
    serve(clients, 'T2', 'b', installationId('T2'));
    serve(clients, 'T1', 'a', installationId('T1'));
    serve(clients, 'T3', 'c', installationId('T3'));
    expect(Object.keys(pools).sort()).toEqual(['T1', 'T3']);
  });

  it('keeps its pools as they are for a request without a team or a token', () => {
    const { bolt, pools, serve } = app();
    const clients = boltClients(bolt, 1);
    serve(clients, 'T1', 'a', installationId('T1'));
    const kept = pools.T1;
    clients.served(undefined, 'b', installationId('T2'));
    clients.served('T1', undefined, installationId('T1'));
    expect(pools.T1).toBe(kept);
    expect(clients.size).toBe(1);
  });
});
