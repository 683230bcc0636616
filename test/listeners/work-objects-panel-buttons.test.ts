import { beforeEach, describe, expect, it } from 'vitest';
import type { ButtonHandler } from '../../src/listeners/actions/click.js';
import {
  createPanelRefresh,
  createPanelStopWatch,
  createPanelWatch,
} from '../../src/listeners/actions/panel-buttons.js';
import type { ListenerDeps } from '../../src/listeners/deps.js';
import { actionListener } from '../../src/pipeline/kinds.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { panelValue } from '../../src/views/invoice-entity.js';
import { buttonArgs, captureLogs, type DepsOptions, HOME_TEAM } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { type Presented, panelFields } from '../support/entity-args.js';
import { expectValidEntity } from '../support/entity-kit.js';
import { useSandbox } from '../support/use-sandbox.js';

/** Issue 41 §2: the side panel's own buttons, through the real handlers and the access rules. */
const env = useSandbox();
const OPEN = DEMO_INVOICE_IDS.open;

beforeEach(() => emptyWork(env.store));

async function click(
  make: (deps: ListenerDeps) => ButtonHandler,
  value: string,
  opts: DepsOptions & { user?: { id: string; username: string; team_id: string } } = {},
) {
  const logs = captureLogs();
  const deps = env.deps({ ...opts, logger: logs.logger });
  const { args, rec } = buttonArgs(value, { actionId: 'entity_watch_invoice' });
  const presented: Presented[] = [];
  Object.assign(args.body, {
    trigger_id: '9.9.panel',
    container: { type: 'entity_detail' },
    channel: undefined,
    ...(opts.user ? { user: opts.user } : {}),
  });
  Object.assign(args.client, { entity: { presentDetails: async (a: Presented) => void presented.push(a) } });
  await actionListener(deps, 'entity_watch_invoice', make(deps))(args);
  return { presented, acks: rec.acks, line: logs.lines.at(-1), deps };
}

const primary = (call: Presented | undefined) =>
  call?.metadata?.entity_payload.actions?.primary_actions?.map((a) => a.text);

describe('the side panel’s buttons', () => {
  it('Watch starts a watch where the panel was opened, and shows the panel again with Stop watching', async () => {
    const { presented, acks, line } = await click(createPanelWatch, panelValue(OPEN, 'C0SUPPORT', 'en-US'));
    expect(acks).toEqual([undefined]);
    expect(line).toMatchObject({ outcome: 'ok', invoiceId: OPEN });
    expect(env.poster.messages.map((m) => m.channel)).toEqual(['C0SUPPORT']);
    expect(presented.map((p) => p.trigger_id)).toEqual(['9.9.panel']);
    expectValidEntity(presented[0]?.metadata);
    expect(primary(presented[0])).toEqual(['Refresh', 'Stop watching']);
    expect(panelFields(presented[0]).watched).toMatch(/^<#C0SUPPORT> since /);
  });

  it('Stop watching ends that watch, and the panel says it is not watched', async () => {
    await click(createPanelWatch, panelValue(OPEN, 'C0SUPPORT', 'en-US'));
    const { presented, line } = await click(createPanelStopWatch, panelValue(OPEN, 'C0SUPPORT', 'en-US'));
    expect(line).toMatchObject({ outcome: 'ok' });
    expect(panelFields(presented[0]).watched).toBe('Not watched');
    expect(panelFields(presented[0]).watched_before).toMatch(/^<#C0SUPPORT> from .+ to .+ UTC$/);
    expect(primary(presented[0])).toEqual(['Refresh', 'Watch']);
  });

  it('Refresh reads the invoice again, in the locale the panel was opened with', async () => {
    const { presented } = await click(createPanelRefresh, panelValue(OPEN, undefined, 'de-DE'));
    expect(panelFields(presented[0]).amount).toBe('149,99 USDT');
    expect(env.sandbox.requests).toHaveLength(1);
  });

  it('refuses Watch to a guest with Slack’s restricted view, and starts nothing', async () => {
    const { presented, line } = await click(createPanelWatch, panelValue(OPEN, 'C0SUPPORT', 'en-US'), {
      user: { id: 'U0GUEST', username: 'guest', team_id: HOME_TEAM },
      people: { U0GUEST: { teamId: HOME_TEAM, enterpriseId: undefined, guest: true } },
    });
    expect(line).toMatchObject({ outcome: 'guest' });
    expect(presented).toEqual([
      expect.objectContaining({ error: expect.objectContaining({ status: 'restricted' }) }),
    ]);
    expect(env.poster.messages).toEqual([]);
    expect(env.sandbox.requests).toEqual([]);
  });

  it('shows someone of another organisation nothing on Refresh', async () => {
    const { presented, line } = await click(createPanelRefresh, panelValue(OPEN, undefined, 'en-US'), {
      user: { id: 'U0OUTSIDER', username: 'o', team_id: 'T0OUTSIDE' },
    });
    expect(line).toMatchObject({ outcome: 'other_workspace' });
    expect(presented[0]).not.toHaveProperty('metadata');
    expect(env.sandbox.requests).toEqual([]);
  });

  it('tells in the panel why a watch could not start: the bot is not in that conversation', async () => {
    env.poster.closedChannels.add('C0CLOSED');
    const { presented, line } = await click(createPanelWatch, panelValue(OPEN, 'C0CLOSED', 'en-US'));
    expect(line).toMatchObject({ outcome: 'not_in_channel' });
    expect(presented[0]?.error).toMatchObject({
      status: 'custom',
      custom_title: 'Could not start the watch',
    });
  });

  it.each([OPEN, `${OPEN} C0SUPPORT`, `${OPEN} C0SUPPORT en-US extra`, `${OPEN} #general en-US`])(
    'answers a value it did not write (%s) with nothing',
    async (value) => {
      const { presented, line } = await click(createPanelWatch, value);
      expect(line).toMatchObject({ outcome: 'stale_button' });
      expect(presented).toEqual([]);
    },
  );
});
