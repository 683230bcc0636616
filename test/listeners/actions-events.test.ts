import { describe, expect, it } from 'vitest';
import { acknowledgeOpenPaymentPage } from '../../src/listeners/actions/open-payment-page.js';
import { createRefreshInvoiceAction } from '../../src/listeners/actions/refresh-invoice.js';
import { createLinkSharedEvent } from '../../src/listeners/events/link-shared.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { buttonArgs, captureLogs, linkSharedArgs } from '../support/bolt.js';
import { useSandbox } from '../support/use-sandbox.js';

const env = useSandbox();
const deps = env.deps;

describe('Refresh button', () => {
  it('acks, reads the invoice again and replaces the message in place, saying who refreshed it', async () => {
    const { args, rec } = buttonArgs(DEMO_INVOICE_IDS.open);
    await createRefreshInvoiceAction(deps())(args);
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
    await createRefreshInvoiceAction(deps())(args);
    const [response] = rec.responses;
    expect(response).toMatchObject({ replace_original: false, response_type: 'ephemeral' });
    expect(response?.text).toMatch(/^Could not refresh the invoice: the payment service is unavailable/);
  });

  it('treats a tampered button value as a bad id, calling nothing', async () => {
    const { args, rec } = buttonArgs('../balance');
    await createRefreshInvoiceAction(deps())(args);
    expect(rec.responses[0]).toMatchObject({ replace_original: false, response_type: 'ephemeral' });
    expect(env.sandbox.requests).toHaveLength(0);
  });

  it('survives a dead response_url', async () => {
    const logs = captureLogs();
    const { args } = buttonArgs(DEMO_INVOICE_IDS.open, { failRespond: true });
    await createRefreshInvoiceAction(deps({ logger: logs.logger }))(args);
    expect(logs.lines.find((l) => l.msg === 'action refresh_invoice')).toMatchObject({
      outcome: 'ok',
      delivery: 'failed',
    });
  });
});

describe('Open payment page button', () => {
  it('is only acknowledged', async () => {
    const { args, rec } = buttonArgs('x', { actionId: 'open_payment_page' });
    await acknowledgeOpenPaymentPage(args);
    expect(rec.acks).toEqual([undefined]);
    expect(rec.responses).toEqual([]);
  });
});

describe('link_shared', () => {
  const link = (id: string) => `${env.sandbox.payUrl}/pay/${id}`;

  it('unfurls each payment link into a compact card, keyed by the exact URL', async () => {
    const urls = [link(DEMO_INVOICE_IDS.open), `${link(DEMO_INVOICE_IDS.paid)}?utm=x`];
    const { args, unfurls } = linkSharedArgs(urls);
    await createLinkSharedEvent(deps())(args);
    expect(unfurls).toHaveLength(1);
    const [call] = unfurls;
    expect(call).toMatchObject({ channel: 'C0SUPPORT', ts: '1700000000.000200' });
    const cards = call && 'unfurls' in call ? (call.unfurls ?? {}) : {};
    expect(Object.keys(cards)).toEqual(urls);
    for (const card of Object.values(cards)) expectValidMessage(card, { requireText: false });
    expect(visibleText(cards[urls[0] ?? ''])).toContain('Order #1042');
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
    ['a link to no invoice', () => link('aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee'), 1],
    ['a malformed link', () => `${env.sandbox.payUrl}/pay/not-an-id`, 0],
    ['a link on another host', () => `https://elsewhere.example/pay/${DEMO_INVOICE_IDS.open}`, 0],
    ['a page that is not a payment link', () => `${env.sandbox.payUrl}/about`, 0],
  ])('leaves %s alone: no unfurl, no throw', async (_label, url, calls) => {
    const { args, unfurls } = linkSharedArgs([url()]);
    await createLinkSharedEvent(deps())(args);
    expect(unfurls).toEqual([]);
    expect(env.sandbox.requests).toHaveLength(calls);
  });

  it('logs, and does not throw, when chat.unfurl fails', async () => {
    const logs = captureLogs();
    const { args } = linkSharedArgs([link(DEMO_INVOICE_IDS.open)], { failUnfurl: true });
    await createLinkSharedEvent(deps({ logger: logs.logger }))(args);
    expect(logs.lines.find((l) => l.msg === 'event link_shared')).toMatchObject({ outcome: 'unfurl_failed' });
  });
});
