import { beforeEach, describe, expect, it } from 'vitest';
import type { CommandArgs } from '../../src/listeners/args.js';
import { createHandlers } from '../../src/listeners/index.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { firstSight } from '../../src/store/events.js';
import { captureLogs, commandArgs, linkSharedArgs } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { NOW } from '../support/factories.js';
import { useSandbox } from '../support/use-sandbox.js';

/**
 * The one workspace's part is built the way every installation's is (`buildTenant`, through
 * `listenerDeps`), but it is nobody's among many: its log lines name no installation, and what it
 * remembers keeps the keys it had before many workspaces existed.
 */
const env = useSandbox();

beforeEach(async () => {
  await emptyWork(env.store);
});

describe('the one workspace', () => {
  it('logs its requests without naming an installation', async () => {
    const logs = captureLogs();
    const handlers = createHandlers(env.deps({ logger: logs.logger }));
    const { args, rec } = commandArgs({ command: '/balance', text: '' });
    await handlers.command['/balance'](args as unknown as CommandArgs);
    expect(JSON.stringify(rec.acks)).toContain('Bitcoin');
    const line = logs.lines.find((l) => l.name === '/balance');
    expect(line).toMatchObject({ outcome: 'ok' });
    expect(line).not.toHaveProperty('installation');
  });

  it('recognises a retry of an event it handled before the upgrade, and unfurls a new one', async () => {
    const handlers = createHandlers(env.deps());
    const link = `${env.sandbox.payUrl}/pay/${DEMO_INVOICE_IDS.open}`;
    // The bot before many workspaces existed saw this event, and kept its id as it was.
    await firstSight(env.store, 'event:Ev0BEFORE', NOW.getTime());
    const retry = linkSharedArgs([link], { eventId: 'Ev0BEFORE' });
    await handlers.event.link_shared(retry.args as never);
    expect(retry.unfurls).toEqual([]);
    const fresh = linkSharedArgs([link], { eventId: 'Ev0AFTER' });
    await handlers.event.link_shared(fresh.args as never);
    expect(fresh.unfurls).toHaveLength(1);
  });
});
