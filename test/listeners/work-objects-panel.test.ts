import { beforeEach, describe, expect, it } from 'vitest';
import {
  createEntityDetailsRequested,
  PANEL_READ_MS,
} from '../../src/listeners/events/entity-details-requested.js';
import { eventListener } from '../../src/pipeline/kinds.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { captureLogs, type DepsOptions, HOME_TEAM } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { entityDetailsArgs, panelFields } from '../support/entity-args.js';
import { expectValidEntity } from '../support/entity-kit.js';
import { useSandbox } from '../support/use-sandbox.js';

/**
 * Issue 41 §2: clicking an invoice's Work Object opens its side panel, filled by the real
 * listener through `entity.presentDetails` for whoever the access rules let see it.
 */
const env = useSandbox();
const OPEN = DEMO_INVOICE_IDS.open;
const REF = `workspace:${OPEN}`;

beforeEach(() => emptyWork(env.store));

async function open(opts: Parameters<typeof entityDetailsArgs>[0], deps: DepsOptions = {}) {
  const logs = captureLogs();
  const d = env.deps({ ...deps, logger: logs.logger });
  const { args, presented } = entityDetailsArgs(opts);
  await eventListener(d, 'entity_details_requested', createEntityDetailsRequested(d))(args as never);
  return { presented, line: logs.lines.at(-1), logs };
}

describe('the side panel of an invoice', () => {
  it('shows every field /invoice shows, for the trigger of the click, with the actions that fit', async () => {
    const { presented, line } = await open({ refId: REF, channel: 'C0SUPPORT' });
    expect(line).toMatchObject({ outcome: 'ok', invoiceId: OPEN, user: 'U0OPENER' });
    expect(presented).toHaveLength(1);
    const [call] = presented;
    expect(call?.trigger_id).toBe('1234.5678.abcdef');
    expectValidEntity(call?.metadata);
    expect(call?.metadata?.external_ref).toEqual({ id: REF, type: 'invoice' });
    expect(call?.metadata?.entity_payload.attributes.title.text).toBe('Order #1042 — annual support plan');
    expect(panelFields(call)).toMatchObject({
      status: 'Open',
      payment: 'Not paid',
      amount: '149.99 USDT',
      fee: '1.4999 USDT · paid by the customer',
      shop: expect.any(String),
      email: 'Yes',
      methods: 'USDT-TRC20, USDT-ERC20, BTC, ETH, LTC',
      invoice_id: OPEN,
      watched: 'Not watched',
    });
    expect(panelFields(call).created).toMatch(/ UTC$/);
    expect(panelFields(call).expiry).toMatch(/ UTC$/);
    const actions = call?.metadata?.entity_payload.actions;
    expect(actions?.primary_actions?.map((a) => a.text)).toEqual(['Refresh', 'Watch']);
    expect(actions?.overflow_actions).toEqual([
      { text: 'Open payment page', action_id: 'open_payment_page', url: `${env.sandbox.payUrl}/pay/${OPEN}` },
    ]);
  });

  it('writes dates and amounts in the opener’s locale, every digit kept', async () => {
    const { presented } = await open({ refId: REF, locale: 'de-DE' });
    const fields = panelFields(presented[0]);
    expect(fields.amount).toBe('149,99 USDT');
    expect(fields.fee).toBe('1,4999 USDT · paid by the customer');
    expect(presented[0]?.metadata?.entity_payload.attributes.locale).toBe('de-DE');
    expect(fields.created).toMatch(/^\d{2}\.\d{2}\.\d{4}, \d{2}:\d{2} UTC$/);
  });

  it('says where the invoice is watched, and offers Stop watching where it was opened', async () => {
    const started = await env.deps().watches.start({
      teamId: HOME_TEAM,
      channelId: 'C0SUPPORT',
      userId: 'U0WATCHER',
      invoiceId: OPEN,
    });
    expect(started.kind).toBe('started');
    const { presented } = await open({ refId: REF, channel: 'C0SUPPORT' });
    expect(panelFields(presented[0]).watched).toMatch(/^<#C0SUPPORT> since /);
    expectValidEntity(presented[0]?.metadata);
    expect(panelFields(presented[0]).states_seen).toMatch(/^Open · Not paid — .+ UTC$/);
    expect(presented[0]?.metadata?.entity_payload.actions?.primary_actions?.map((a) => a.text)).toEqual([
      'Refresh',
      'Stop watching',
    ]);
  });

  it('shows a guest of the workspace Slack’s restricted view with the reason, and reads nothing', async () => {
    const { presented, line } = await open(
      { refId: REF, user: 'U0GUEST' },
      { people: { U0GUEST: { teamId: HOME_TEAM, enterpriseId: undefined, guest: true } } },
    );
    expect(line).toMatchObject({ outcome: 'guest' });
    expect(presented).toEqual([
      {
        trigger_id: '1234.5678.abcdef',
        error: {
          status: 'restricted',
          custom_title: 'You cannot open this invoice',
          custom_message:
            'Guests of the workspace do not see the merchant’s invoices in full. Ask a full member of the workspace.',
        },
      },
    ]);
    expect(env.sandbox.requests).toEqual([]);
  });

  it('shows someone of another organisation nothing of this workspace: restricted, no field, no call', async () => {
    const { presented, line } = await open(
      { refId: REF, user: 'U0OUTSIDER' },
      { people: { U0OUTSIDER: { teamId: 'T0OUTSIDE', enterpriseId: 'E0OTHER' } } },
    );
    expect(line).toMatchObject({ outcome: 'other_workspace' });
    expect(presented).toHaveLength(1);
    expect(presented[0]).not.toHaveProperty('metadata');
    expect(presented[0]?.error).toMatchObject({
      status: 'restricted',
      custom_message: 'This invoice’s details are only for members of the workspace it belongs to.',
    });
    expect(JSON.stringify(presented)).not.toContain('Order #1042');
    expect(env.sandbox.requests).toEqual([]);
  });

  it.each([
    ['another installation’s card', `T0OTHER:${OPEN}`, undefined],
    ['a ref the bot did not write', OPEN, undefined],
    ['a ref of another type', REF, 'task'],
  ])('answers %s with not_found, reading nothing', async (_label, refId, refType) => {
    const { presented, line } = await open({ refId, ...(refType ? { refType } : {}) });
    expect(line).toMatchObject({ outcome: 'no_invoice' });
    expect(presented[0]?.error).toMatchObject({ status: 'not_found' });
    expect(env.sandbox.requests).toEqual([]);
  });

  it('answers an invoice the service does not know with not_found', async () => {
    const { presented, line } = await open({ refId: 'workspace:aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee' });
    expect(line).toMatchObject({ outcome: 'invoice_not_found' });
    expect(presented[0]?.error).toMatchObject({ status: 'not_found' });
  });

  it('shows Slack’s internal_error view when the opener cannot be looked up, and reads nothing', async () => {
    const { presented, line, logs } = await open({ refId: REF, user: 'U0NEW' }, { directoryFails: true });
    expect(line).toMatchObject({ outcome: 'panel_failed' });
    expect(presented).toEqual([{ trigger_id: '1234.5678.abcdef', error: { status: 'internal_error' } }]);
    expect(logs.lines.find((l) => l.msg === 'could not fill the side panel')).toHaveProperty('err');
    expect(env.sandbox.requests).toEqual([]);
  });

  it('logs, and does not throw, when Slack refuses the panel', async () => {
    const logs = captureLogs();
    const d = env.deps({ logger: logs.logger });
    const { args } = entityDetailsArgs({ refId: REF });
    args.client = {
      entity: {
        presentDetails: async () => {
          throw new Error('An API error occurred: invalid_trigger_id');
        },
      },
    };
    await eventListener(d, 'entity_details_requested', createEntityDetailsRequested(d))(args as never);
    expect(logs.lines.at(-1)).toMatchObject({ outcome: 'panel_failed' });
    expect(logs.lines.filter((l) => l.msg === 'entity.presentDetails failed')).toHaveLength(1);
  });

  it('shows Slack’s timeout view while the trigger is still good when the service is slow', async () => {
    env.sandbox.setLatency(PANEL_READ_MS + 1000);
    const started = performance.now();
    const { presented, line } = await open({ refId: REF });
    const ms = performance.now() - started;
    expect(line).toMatchObject({ outcome: 'timeout', invoiceId: OPEN });
    expect(presented).toEqual([{ trigger_id: '1234.5678.abcdef', error: { status: 'timeout' } }]);
    expect(ms).toBeGreaterThanOrEqual(PANEL_READ_MS - 50);
    expect(ms).toBeLessThan(3000);
  });

  it('fills the panel once for a retried event, and again for each new click', async () => {
    const first = await open({ refId: REF, eventId: 'EvPanel1' });
    const retry = await open({ refId: REF, eventId: 'EvPanel1' });
    const again = await open({ refId: REF, eventId: 'EvPanel2' });
    expect([first.presented.length, retry.presented.length, again.presented.length]).toEqual([1, 0, 1]);
    expect(retry.line).toMatchObject({ outcome: 'duplicate' });
  });
});
