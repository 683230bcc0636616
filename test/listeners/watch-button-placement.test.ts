import type { BlockAction, ButtonAction } from '@slack/bolt';
import { beforeEach, describe, expect, it } from 'vitest';
import { createWatchInvoiceAction } from '../../src/listeners/actions/watch-invoice.js';
import { actionListener } from '../../src/pipeline/kinds.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { visibleText } from '../support/block-kit.js';
import { buttonArgs, HOME_TEAM } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { useSandbox } from '../support/use-sandbox.js';

/**
 * Where a Watch click's live card goes, and whose watch it is, from what Slack's click says:
 * the clicked message's thread (or the container's, when the click carries no message), the
 * channel when neither names one; the clicker's team, or the click's when the user has none.
 */
const env = useSandbox();
const OPEN = DEMO_INVOICE_IDS.open;
const CARD = '1700000000.000300';

beforeEach(async () => {
  await emptyWork(env.store);
});

/** A Watch click in C0SUPPORT whose body `edit` changes; what the clicker is told. */
async function clickWatch(edit: (body: BlockAction<ButtonAction>) => void) {
  const deps = env.deps();
  const { args, rec } = buttonArgs(OPEN, { actionId: 'watch_invoice' });
  edit(args.body as BlockAction<ButtonAction>);
  await actionListener(deps, 'watch_invoice', createWatchInvoiceAction(deps))(args);
  return visibleText(rec.responses[0]);
}

describe('Watch, where Slack leaves out parts of the click', () => {
  it('puts the live card in the container message’s thread when the click carries no message', async () => {
    const told = await clickWatch((body) => {
      delete body.message;
      body.container = { type: 'message', message_ts: CARD };
    });
    expect(told).toContain('Watching *');
    expect(env.poster.calls).toEqual([`post C0SUPPORT thread ${CARD}`]);
  });

  it('puts the live card in the channel when neither the click nor its container names a message', async () => {
    const told = await clickWatch((body) => {
      delete body.message;
      body.container = { type: 'message' };
    });
    expect(told).toContain('Watching *');
    expect(env.poster.calls).toEqual(['post C0SUPPORT']);
  });

  it('counts the watch as the clicker’s in the click’s team when Slack names no team for the user', async () => {
    await clickWatch((body) => {
      delete body.user.team_id;
    });
    const started = await env.deps().watches.startedBy(HOME_TEAM, 'U0CLICKER');
    expect(started.map((w) => w.invoiceId)).toEqual([OPEN]);
  });

  it('still watches, in the clicked card’s thread, when the click names no team at all', async () => {
    const told = await clickWatch((body) => {
      delete body.user.team_id;
      Reflect.deleteProperty(body, 'team');
    });
    expect(told).toContain('Watching *');
    expect(env.poster.calls).toEqual(['post C0SUPPORT thread 1700000000.000100']);
  });

  it('counts the watch in the user’s own team, not the click’s, when both are named', async () => {
    await clickWatch((body) => {
      body.team = { id: 'T0HOST', domain: 'host' };
    });
    expect(await env.deps().watches.startedBy('T0HOST', 'U0CLICKER')).toEqual([]);
    const started = await env.deps().watches.startedBy(HOME_TEAM, 'U0CLICKER');
    expect(started.map((w) => w.invoiceId)).toEqual([OPEN]);
  });
});
