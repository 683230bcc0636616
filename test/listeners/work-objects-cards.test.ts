import type { EntityMetadata } from '@slack/types';
import { beforeEach, describe, expect, it } from 'vitest';
import { createInvoiceCommand } from '../../src/listeners/commands/invoice.js';
import { createLinkSharedEvent } from '../../src/listeners/events/link-shared.js';
import { commandListener } from '../../src/pipeline/kinds.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { expectValidMessage } from '../support/block-kit.js';
import { captureLogs, commandArgs, HOME_TEAM, linkSharedArgs } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { expectValidEntity } from '../support/entity-kit.js';
import { useSandbox } from '../support/use-sandbox.js';

/**
 * Issue 41 §1 and §3: every invoice card the bot shows in a conversation carries its Work Object,
 * with only what the channel already sees; the card's blocks stay today's, so where Slack drops
 * the entity nothing else changes.
 */
const env = useSandbox();
const OPEN = DEMO_INVOICE_IDS.open;
const link = (id: string) => `${env.sandbox.payUrl}/pay/${id}`;
/** What a card's entity may show: the channel sees no more than this on today's cards. */
const CARD_KEYS = ['status', 'payment', 'amount', 'expiry'];

beforeEach(() => emptyWork(env.store));

/** The Work Objects a Slack call or a reply carries (`metadata.entities`). */
const entitiesOf = (call: unknown): EntityMetadata[] =>
  (call as { metadata?: { entities?: EntityMetadata[] } } | undefined)?.metadata?.entities ?? [];

describe('a pasted payment link', () => {
  it('unfurls into today’s card and its Work Object, keyed to the exact URL pasted', async () => {
    const url = `${link(OPEN)}?utm=x`;
    const { args, unfurls } = linkSharedArgs([url]);
    await createLinkSharedEvent(env.deps())(args);
    const [call] = unfurls;
    const [entity] = entitiesOf(call);
    expectValidEntity(entity, { unfurl: true });
    expect(entity).toMatchObject({
      app_unfurl_url: url,
      url: link(OPEN),
      entity_type: 'slack#/entities/item',
      external_ref: { id: `workspace:${OPEN}`, type: 'invoice' },
    });
    expect(entity?.entity_payload.attributes.title.text).toBe('Order #1042 — annual support plan');
    const fields = entity?.entity_payload.custom_fields ?? [];
    expect(fields.map((f) => f.key)).toEqual(CARD_KEYS);
    expect(Object.fromEntries(fields.map((f) => [f.key, f.value]))).toMatchObject({
      status: 'Open',
      payment: 'Not paid',
      amount: '149.99 USDT',
    });
    const card = call && 'unfurls' in call ? call.unfurls?.[url] : undefined;
    expectValidMessage(card, { requireText: false });
  });

  it('logs once per installation that Slack dropped the Work Object, and the cards still go out', async () => {
    const logs = captureLogs();
    const deps = env.deps({ logger: logs.logger });
    const sent: unknown[] = [];
    for (const eventId of ['EvDropped1', 'EvDropped2']) {
      const { args } = linkSharedArgs([link(OPEN)], { eventId });
      args.client = {
        chat: {
          unfurl: async (a) => {
            sent.push(a);
            return { ok: true, warning: 'invalid_metadata_format' };
          },
        },
      };
      expect(await createLinkSharedEvent(deps)(args)).toMatchObject({ outcome: 'ok' });
    }
    expect(sent).toHaveLength(2);
    expect(logs.lines.filter((l) => l.level === 'warn')).toEqual([
      expect.objectContaining({ method: 'chat.unfurl', warning: 'invalid_metadata_format' }),
    ]);
  });
});

describe('/invoice', () => {
  async function show(invoiceReply: 'in_channel' | 'ephemeral') {
    const deps = env.deps({ invoiceReply });
    const { args, rec } = commandArgs({ text: OPEN });
    await commandListener(deps, '/invoice', createInvoiceCommand(deps))(args);
    return (rec.acks[0] ?? rec.responses[0]) as Record<string, unknown>;
  }

  it('makes the card the channel sees a Work Object, its blocks unchanged', async () => {
    const reply = await show('in_channel');
    expect(reply.response_type).toBe('in_channel');
    expect(entitiesOf(reply).map((e) => e.external_ref.id)).toEqual([`workspace:${OPEN}`]);
    expectValidEntity(entitiesOf(reply)[0]);
    expectValidMessage(reply);
  });

  it('leaves a card only the asker sees as a message', async () => {
    const reply = await show('ephemeral');
    expect(reply).not.toHaveProperty('metadata');
  });
});

describe('a watch’s live card', () => {
  it('is posted with a Work Object that holds no state to go stale, beside the id it is found by', async () => {
    const started = await env
      .deps()
      .watches.start({ teamId: HOME_TEAM, channelId: 'C0SUPPORT', userId: 'U0W', invoiceId: OPEN });
    expect(started.kind).toBe('started');
    const [card] = env.poster.messages;
    expect(card?.messageId).toMatch(/^watch-/);
    const [entity] = card?.entities ?? [];
    expectValidEntity(entity);
    expect(entity?.external_ref).toEqual({ id: `workspace:${OPEN}`, type: 'invoice' });
    expect(entity?.entity_payload.custom_fields?.map((f) => f.key)).toEqual(['live']);
  });
});
