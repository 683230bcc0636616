import { describe, expect, it } from 'vitest';
import { acknowledgeOpenPaymentPage } from '../../src/listeners/actions/open-payment-page.js';
import { createRefreshInvoiceAction } from '../../src/listeners/actions/refresh-invoice.js';
import { createLinkSharedEvent } from '../../src/listeners/events/link-shared.js';
import { actionListener, eventListener } from '../../src/pipeline/kinds.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { buttonArgs, captureLogs, linkSharedArgs } from '../support/bolt.js';
import { useSandbox } from '../support/use-sandbox.js';

const env = useSandbox();
const deps = env.deps;

describe('Refresh button', () => {
  it('acks, reads the invoice again and replaces the message in place, saying who refreshed it', async () => {
    const { args, rec } = buttonArgs(DEMO_INVOICE_IDS.open);
    expect(await createRefreshInvoiceAction(deps())(args)).toEqual({
      outcome: 'ok',
      invoiceId: DEMO_INVOICE_IDS.open,
      delivery: 'response_url',
    });
    expect(rec.acks).toEqual([undefined]);
    const [response] = rec.responses;
    expect(response?.replace_original).toBe(true);
    expectValidMessage(response);
    expect(visibleText(response)).toMatch(/refreshed <!date\^\d+\^[^>]+> by <@U0CLICKER>/);
    expect(env.sandbox.requests).toHaveLength(1);
  });

  it('leaves the message as it was and tells only the clicker when the refresh fails', async () => {
    env.sandbox.failNext({ kind: 'status', status: 503 }, 3);
    const { args, rec } = buttonArgs(DEMO_INVOICE_IDS.open);
    expect(await createRefreshInvoiceAction(deps())(args)).toMatchObject({ outcome: 'service_unavailable' });
    const [response] = rec.responses;
    expect(response).toMatchObject({ replace_original: false, response_type: 'ephemeral' });
    expectValidMessage(response);
    expect(response?.text).toMatch(/^Could not refresh the invoice: the payment service is unavailable/);
  });

  it('answers a value it did not write with a way to a fresh card, leaving the card alone and calling nothing', async () => {
    const { args, rec } = buttonArgs('../balance');
    expect(await createRefreshInvoiceAction(deps())(args)).toMatchObject({ outcome: 'stale_button' });
    expect(rec.responses[0]).toMatchObject({ replace_original: false, response_type: 'ephemeral' });
    expect(visibleText(rec.responses[0])).toBe(
      ':warning: *That button no longer works*\nRun `/invoice &lt;id&gt;` again for a fresh card.',
    );
    expect(env.sandbox.requests).toHaveLength(0);
  });

  it('survives a dead response_url', async () => {
    const logs = captureLogs();
    const { args } = buttonArgs(DEMO_INVOICE_IDS.open, { failRespond: true });
    const d = deps({ logger: logs.logger });
    await actionListener(d, 'refresh_invoice', createRefreshInvoiceAction(d))(args);
    expect(logs.lines.map((l) => [l.level, l.msg, 'err' in l])).toEqual([
      ['warn', 'could not post the reply to response_url', true],
      ['info', 'action refresh_invoice', false],
    ]);
    expect(logs.lines.at(-1)).toMatchObject({
      kind: 'action',
      user: 'U0CLICKER',
      team: 'T0HOME',
      channel: 'C0SUPPORT',
      invoiceId: DEMO_INVOICE_IDS.open,
      outcome: 'ok',
      delivery: 'failed',
    });
  });

  it('still answers when its ack fails, and logs the failed ack', async () => {
    const logs = captureLogs();
    const { args, rec } = buttonArgs(DEMO_INVOICE_IDS.open, { failAck: true });
    await createRefreshInvoiceAction(deps({ logger: logs.logger }))(args);
    expect(rec.responses[0]?.replace_original).toBe(true);
    expect(logs.lines.find((l) => l.msg === 'could not acknowledge the request')).toHaveProperty('err');
  });
});

describe('Open payment page button', () => {
  it('is only acknowledged', async () => {
    const { args, rec } = buttonArgs('x', { actionId: 'open_payment_page' });
    expect(await acknowledgeOpenPaymentPage(args)).toEqual({ outcome: 'ok' });
    expect(rec.acks).toEqual([undefined]);
    expect(rec.responses).toEqual([]);
  });
});

describe('link_shared', () => {
  const link = (id: string) => `${env.sandbox.payUrl}/pay/${id}`;

  it('unfurls each payment link into a compact card, keyed by the exact URL', async () => {
    const urls = [link(DEMO_INVOICE_IDS.open), `${link(DEMO_INVOICE_IDS.paid)}?utm=x`];
    const { args, unfurls } = linkSharedArgs(urls);
    expect(await createLinkSharedEvent(deps())(args)).toEqual({
      outcome: 'ok',
      invoiceId: `${DEMO_INVOICE_IDS.open},${DEMO_INVOICE_IDS.paid}`,
      counts: { unfurled: 2 },
    });
    expect(unfurls).toHaveLength(1);
    const [call] = unfurls;
    expect(call).toMatchObject({ channel: 'C0SUPPORT', ts: '1700000000.000200' });
    const cards = call && 'unfurls' in call ? (call.unfurls ?? {}) : {};
    expect(Object.keys(cards)).toEqual(urls);
    for (const card of Object.values(cards)) expectValidMessage(card, { requireText: false });
    expect(visibleText(cards[urls[0] ?? ''])).toContain('Order #1042');
  });

  it('unfurls a retried event once: Slack’s retry finds it already handled', async () => {
    const first = linkSharedArgs([link(DEMO_INVOICE_IDS.open)], { eventId: 'EvRetried1' });
    const retry = linkSharedArgs([link(DEMO_INVOICE_IDS.open)], { eventId: 'EvRetried1' });
    expect(await createLinkSharedEvent(deps())(first.args)).toMatchObject({ outcome: 'ok' });
    expect(await createLinkSharedEvent(deps())(retry.args)).toEqual({ outcome: 'duplicate' });
    expect(first.unfurls).toHaveLength(1);
    expect(retry.unfurls).toEqual([]);
    expect(env.sandbox.requests).toHaveLength(1);
  });

  it('answers composer previews by unfurl_id and source', async () => {
    const { args, unfurls } = linkSharedArgs([link(DEMO_INVOICE_IDS.open)], {
      unfurlId: 'U123',
      source: 'composer',
    });
    await createLinkSharedEvent(deps())(args);
    expect(unfurls[0]).toMatchObject({ unfurl_id: 'U123', source: 'composer' });
    expect(unfurls[0]).not.toHaveProperty('ts');
  });

  it.each([
    ['conversations_history', { unfurlId: 'U124', source: 'conversations_history' }, true],
    ['an unfurl_id without a known source', { unfurlId: 'U125', source: 'other' }, false],
    ['a composer source without an unfurl_id', { unfurlId: undefined, source: 'composer' }, false],
  ])('answers %s by unfurl_id only when both are there', async (_label, opts, byId) => {
    const { args, unfurls } = linkSharedArgs([link(DEMO_INVOICE_IDS.open)], opts as never);
    await createLinkSharedEvent(deps())(args);
    if (byId) expect(unfurls[0]).toMatchObject({ unfurl_id: opts.unfurlId, source: opts.source });
    else expect(unfurls[0]).toMatchObject({ channel: 'C0SUPPORT', ts: '1700000000.000200' });
  });

  it('logs each link it could not unfurl, and unfurls the rest', async () => {
    const logs = captureLogs();
    const missing = link('aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee');
    const { args, unfurls } = linkSharedArgs([missing, link(DEMO_INVOICE_IDS.open)]);
    expect(await createLinkSharedEvent(deps({ logger: logs.logger }))(args)).toMatchObject({
      outcome: 'ok',
      counts: { unfurled: 1 },
    });
    expect(unfurls).toHaveLength(1);
    expect(logs.lines.find((l) => l.msg === 'no unfurl for a payment link')).toMatchObject({
      level: 'warn',
      err: { name: 'InvoiceNotFoundError' },
    });
  });

  it('unfurls at most five links of a message', async () => {
    const urls = Array.from({ length: 7 }, (_, i) => `${link(DEMO_INVOICE_IDS.open)}?n=${i}`);
    const { args, unfurls } = linkSharedArgs(urls);
    await createLinkSharedEvent(deps())(args);
    const call = unfurls[0];
    expect(Object.keys(call && 'unfurls' in call ? (call.unfurls ?? {}) : {})).toEqual(urls.slice(0, 5));
  });

  it.each([
    ['a link to no invoice', () => link('aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee'), 1, 'no_invoice'],
    ['a malformed link', () => `${env.sandbox.payUrl}/pay/not-an-id`, 0, 'no_payment_link'],
    [
      'a link on another host',
      () => `https://elsewhere.example/pay/${DEMO_INVOICE_IDS.open}`,
      0,
      'no_payment_link',
    ],
    ['a page that is not a payment link', () => `${env.sandbox.payUrl}/about`, 0, 'no_payment_link'],
  ])('leaves %s alone: no unfurl, no throw', async (_label, url, calls, outcome) => {
    const { args, unfurls } = linkSharedArgs([url()]);
    expect(await createLinkSharedEvent(deps())(args)).toMatchObject({ outcome });
    expect(unfurls).toEqual([]);
    expect(env.sandbox.requests).toHaveLength(calls);
  });

  it('logs, and does not throw, when chat.unfurl fails', async () => {
    const logs = captureLogs();
    const { args } = linkSharedArgs([link(DEMO_INVOICE_IDS.open)], { failUnfurl: true });
    const d = deps({ logger: logs.logger });
    await eventListener(d, 'link_shared', createLinkSharedEvent(d))(args);
    expect(logs.lines.find((l) => l.msg === 'chat.unfurl failed')).toHaveProperty('err');
    expect(logs.lines.map((l) => [l.level, l.msg])).toEqual([
      ['warn', 'chat.unfurl failed'],
      ['info', 'event link_shared'],
    ]);
    expect(logs.lines.at(-1)).toMatchObject({
      kind: 'event',
      user: 'U0PASTER',
      team: 'T0HOME',
      channel: 'C0SUPPORT',
      outcome: 'unfurl_failed',
      invoiceId: DEMO_INVOICE_IDS.open,
    });
  });
});
