import { beforeEach, describe, expect, it } from 'vitest';
import { createInvoiceCommand } from '../../src/listeners/commands/invoice.js';
import { commandListener } from '../../src/pipeline/kinds.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { SlackPostError } from '../../src/slack/calls.js';
import { captureLogs, commandArgs } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { useSandbox } from '../support/use-sandbox.js';

/**
 * `/invoice watch` when Slack did not confirm the live card: told privately, logged as Slack
 * being busy; asked again while the card is unconfirmed, told privately it is watched already.
 */
const env = useSandbox();

beforeEach(async () => {
  await emptyWork(env.store);
});

async function watchOpen() {
  const logs = captureLogs();
  const deps = env.deps({ logger: logs.logger });
  const { args, rec } = commandArgs({ command: '/invoice', text: `watch ${DEMO_INVOICE_IDS.open}` });
  await commandListener(deps, '/invoice', createInvoiceCommand(deps))(args);
  const reply = (rec.acks[0] ?? rec.responses[0]) as { response_type?: string };
  return {
    shown: reply.response_type,
    outcome: logs.lines.find((l) => l.msg === 'command /invoice')?.outcome,
  };
}

describe('/invoice watch while Slack has not confirmed the live card', () => {
  it('answers privately, as slack_busy, then as already_watched', async () => {
    // No answer to the post, nor to the look for the card: it may have been posted.
    env.poster.failNext(new SlackPostError('transient', undefined), 2);
    expect(await watchOpen()).toEqual({ shown: 'ephemeral', outcome: 'slack_busy' });
    expect(await watchOpen()).toEqual({ shown: 'ephemeral', outcome: 'already_watched' });
  });
});
