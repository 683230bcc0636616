import { sql } from 'kysely';
import { beforeEach, describe, expect, it } from 'vitest';
import { createRefreshInvoiceAction } from '../../src/listeners/actions/refresh-invoice.js';
import { createShareInvoiceAction } from '../../src/listeners/actions/share-invoice.js';
import { createInvoiceCommand } from '../../src/listeners/commands/invoice.js';
import { createLinkSharedEvent } from '../../src/listeners/events/link-shared.js';
import { createGetInvoiceStep } from '../../src/listeners/functions/get-invoice.js';
import { createCheckPaymentShortcut } from '../../src/listeners/shortcuts/check-payment.js';
import { commandListener } from '../../src/pipeline/kinds.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import { buttonArgs, captureLogs, commandArgs, linkSharedArgs } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { shortcutArgs, stepArgs } from '../support/tool-args.js';
import { useSandbox } from '../support/use-sandbox.js';

/**
 * Every surface that looks an invoice up remembers what it saw (issue 40, point 5): one seen
 * paid, when this workspace had not seen it paid, is recorded in the conversation it was seen in,
 * for that channel's feed to name (test/feed/paid-invoices.test.ts shows the feed naming it).
 */

const env = useSandbox();
const { open: OPEN, paid: PAID } = DEMO_INVOICE_IDS;
const link = (id: string) => `${env.sandbox.payUrl}/pay/${id}`;

beforeEach(async () => {
  await emptyWork(env.store);
});

const recorded = () =>
  env.store.db
    .selectFrom('invoices_paid')
    .select(['channel_id', 'invoice_id', 'how'])
    .orderBy('id')
    .execute();

const refresh = async (id: string) => {
  const deps = env.deps();
  await createRefreshInvoiceAction(deps)(buttonArgs(id).args);
};

describe('a lookup that sees an invoice paid', () => {
  it('is recorded in its channel by the Refresh button, once however often it is clicked', async () => {
    await refresh(PAID);
    await refresh(PAID);
    expect(await recorded()).toEqual([{ channel_id: 'C0SUPPORT', invoice_id: PAID, how: 'seen' }]);
  });

  it('is recorded when the invoice was open at the last lookup and is paid (or overpaid) now', async () => {
    await refresh(OPEN);
    expect(await recorded()).toEqual([]);
    env.sandbox.updateInvoice(OPEN, { payStatus: 'overpaid' });
    await refresh(OPEN);
    expect(await recorded()).toEqual([{ channel_id: 'C0SUPPORT', invoice_id: OPEN, how: 'seen' }]);
  });

  it('is recorded by an unfurl in the channel, not by a preview in someone’s composer', async () => {
    const preview = linkSharedArgs([link(OPEN)], { unfurlId: 'U1', source: 'composer' });
    env.sandbox.updateInvoice(OPEN, { payStatus: 'paid' });
    await createLinkSharedEvent(env.deps())(preview.args);
    expect(await recorded()).toEqual([]);
    await createLinkSharedEvent(env.deps())(linkSharedArgs([link(PAID)]).args);
    expect(await recorded()).toEqual([{ channel_id: 'C0SUPPORT', invoice_id: PAID, how: 'seen' }]);
  });

  it('by the Check payment status shortcut, answered privately, is named in no channel; the channel’s own lookup after it names it there', async () => {
    const deps = { ...env.deps(), responseUrls: { post: async () => undefined } };
    const { args } = shortcutArgs({ ts: '1700000000.000500', text: `paid? ${link(PAID)}` }, 'G0FINANCE');
    await createCheckPaymentShortcut(deps)(args);
    expect(await recorded()).toEqual([]);
    // Share in thread, or a Refresh the channel sees, is the first time a conversation saw it paid.
    await refresh(PAID);
    expect(await recorded()).toEqual([{ channel_id: 'C0SUPPORT', invoice_id: PAID, how: 'seen' }]);
  });

  it('by /invoice answered privately (INVOICE_REPLY=ephemeral), or by Refresh on a private card, is named in no channel', async () => {
    const deps = env.deps({ invoiceReply: 'ephemeral' });
    await commandListener(deps, '/invoice', createInvoiceCommand(deps))(commandArgs({ text: PAID }).args);
    const click = buttonArgs(OPEN);
    (click.args.body.container as { is_ephemeral?: boolean }).is_ephemeral = true;
    env.sandbox.updateInvoice(OPEN, { payStatus: 'paid' });
    await createRefreshInvoiceAction(env.deps())(click.args);
    expect(await recorded()).toEqual([]);
    // Nor are they sightings: no conversation saw them.
    expect(await env.store.db.selectFrom('invoices_seen').selectAll().execute()).toEqual([]);
  });

  it('is recorded by Share in thread in its channel', async () => {
    const { args } = buttonArgs(`${PAID} 1700000000.000500`, { actionId: 'share_invoice:0' });
    await createShareInvoiceAction(env.deps())(args);
    expect(await recorded()).toEqual([{ channel_id: 'C0SUPPORT', invoice_id: PAID, how: 'seen' }]);
  });

  it('by a workflow step, in no conversation, is named in no channel, nor taken as a sighting', async () => {
    await createGetInvoiceStep(env.deps())(stepArgs(PAID).args);
    expect(await recorded()).toEqual([]);
    await refresh(PAID);
    expect(await recorded()).toEqual([{ channel_id: 'C0SUPPORT', invoice_id: PAID, how: 'seen' }]);
  });

  it('answers all the same, and logs it, when what it saw cannot be recorded', async () => {
    const logs = captureLogs();
    const { args, rec } = buttonArgs(PAID);
    await sql`alter table invoices_seen rename to invoices_seen_away`.execute(env.store.db);
    try {
      expect(await createRefreshInvoiceAction(env.deps({ logger: logs.logger }))(args)).toMatchObject({
        outcome: 'ok',
      });
    } finally {
      await sql`alter table invoices_seen_away rename to invoices_seen`.execute(env.store.db);
    }
    expect(visibleText(rec.responses[0])).toContain('Order #1041');
    expect(logs.lines.map((l) => l.msg)).toContain('an invoice lookup was not recorded');
  });
});
