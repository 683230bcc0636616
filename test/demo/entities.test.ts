import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { entityCardsHtml, flexpaneHtml } from '../../src/demo/entities.js';
import { type DemoSlack, startDemoSlack } from '../../src/demo/slack.js';
import { invoiceCardEntity, invoicePanelEntity, panelRefusal } from '../../src/views/invoice-entity.js';
import { api, formCall } from '../support/demo-slack-api.js';
import { invoice } from '../support/factories.js';

/** Issue 41 §4: the demo's Slack keeps what the bot presents, and its page draws cards and the side panel. */

let slack: DemoSlack;
beforeEach(async () => {
  slack = await startDemoSlack({ unfurlHosts: [] });
});
afterEach(() => slack.close());

const hostile = invoice({ title: '<script>alert(1)</script> & <b>bold</b>' });

describe('a Work Object’s card in the demo', () => {
  it('draws the title and fields as text, whatever they hold, as a button that opens the panel', () => {
    const html = entityCardsHtml({ entities: [invoiceCardEntity(hostile, { installation: '' })] }, '17.1');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;');
    expect(html).not.toContain('<script>');
    expect(html).toMatch(/^<button type="button" class="wo-card" data-entity="17\.1" data-ref="workspace:/);
    expect(html).toContain('<time class="bk-date"');
  });

  it('draws nothing for a message without entities, or metadata that is not theirs', () => {
    expect(entityCardsHtml(undefined, '1.1')).toBe('');
    expect(entityCardsHtml({ event_type: 'payments_bot_message', event_payload: {} }, '1.1')).toBe('');
    expect(entityCardsHtml('not json', '1.1')).toBe('');
  });
});

describe('entity.presentDetails in the demo', () => {
  it('keeps the panel the bot presents, form-encoded as the Web API client sends it', async () => {
    const metadata = invoicePanelEntity(hostile, {
      installation: '',
      locale: 'en-US',
      watches: [],
      seen: [],
      watchable: false,
    });
    const answer = await formCall(slack, 'entity.presentDetails', {
      trigger_id: '1.2',
      metadata: JSON.stringify(metadata),
    });
    expect(await answer.json()).toEqual({ ok: true });
    const html = flexpaneHtml(slack.flexpane);
    expect(html).toContain('<aside class="flexpane"');
    expect(html).toContain('data-panel-action="entity_refresh_invoice"');
    expect(html).not.toContain('<script>');
  });

  it('shows the error view it is given, and refuses a call without a trigger', async () => {
    expect(
      await api(slack, 'entity.presentDetails', { trigger_id: '1.3', error: panelRefusal('guest') }),
    ).toEqual({ ok: true });
    expect(flexpaneHtml(slack.flexpane)).toContain('data-status="restricted"');
    expect(await api(slack, 'entity.presentDetails', { error: panelRefusal('guest') })).toEqual({
      ok: false,
      error: 'invalid_trigger_id',
    });
  });
});
