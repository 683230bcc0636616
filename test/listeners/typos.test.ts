import { beforeEach, describe, expect, it } from 'vitest';
import { createBalanceCommand } from '../../src/listeners/commands/balance.js';
import { createInvoiceCommand } from '../../src/listeners/commands/invoice.js';
import { commandListener } from '../../src/pipeline/kinds.js';
import { DEMO_INVOICE_IDS } from '../../src/sandbox/data.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { captureLogs, commandArgs } from '../support/bolt.js';
import { emptyWork } from '../support/empty-store.js';
import { useSandbox } from '../support/use-sandbox.js';

/**
 * Issue 30, point 5: a typo or a leftover word is named back with what was most likely meant,
 * never answered with a wrong diagnosis or silently; nothing is called for it.
 */
const env = useSandbox();
const OPEN = DEMO_INVOICE_IDS.open;

beforeEach(async () => {
  await emptyWork(env.store);
});

async function run(command: '/invoice' | '/balance', text: string) {
  const logs = captureLogs();
  const deps = env.deps({ logger: logs.logger });
  const handler = command === '/invoice' ? createInvoiceCommand(deps) : createBalanceCommand(deps);
  const { args, rec } = commandArgs({ command, text });
  await commandListener(deps, command, handler)(args);
  const reply = rec.acks[0] ?? rec.responses[0];
  expectValidMessage(reply);
  return {
    text: visibleText(reply),
    shown: (reply as { response_type?: string }).response_type,
    outcome: logs.lines.find((l) => l.msg === `command ${command}`)?.outcome,
  };
}

const INVOICE_TAKES =
  '`/invoice` takes an invoice id or payment link, alone or after `watch` or `unwatch`; or `watching`, or `help`.';
const BALANCE_TAKES =
  '`/balance` alone shows the balance; it also takes `subscribe [HH:MM [Area/City]]`, `unsubscribe`, `subscriptions` and `help`.';

describe('/invoice with a word it does not take', () => {
  it('suggests `watch` for `wach <id>`, ready to type again, and watches nothing', async () => {
    const { text, shown, outcome } = await run('/invoice', `wach ${OPEN}`);
    expect(text).toBe(
      `:warning: *Not something /invoice does*\n\`wach\` is not a word \`/invoice\` knows. Did you mean \`/invoice watch ${OPEN}\`? ${INVOICE_TAKES}`,
    );
    expect(shown).toBe('ephemeral');
    expect(outcome).toBe('usage');
    expect(env.sandbox.requests).toEqual([]);
    expect(env.poster.calls).toEqual([]);
  });

  it('names a word that is near none of its own, and what it takes', async () => {
    expect((await run('/invoice', `show ${OPEN}`)).text).toBe(
      `:warning: *Not something /invoice does*\n\`show\` is not a word \`/invoice\` knows. ${INVOICE_TAKES}`,
    );
  });

  it('quotes what was typed safely: no ping, no broken code span', async () => {
    const { text } = await run('/invoice', 'wach <!channel> `x`');
    expect(text).toContain("Did you mean `/invoice watch &lt;!channel&gt; 'x'`?");
  });
});

describe('/invoice with a link on another host', () => {
  it('names the host payment links are expected on', async () => {
    const { text, outcome } = await run('/invoice', `<https://evil.example/pay/${OPEN}>`);
    const pay = new URL(env.sandbox.payUrl);
    expect(text).toBe(
      `:warning: *That is not one of this merchant’s payment links*\n\`&lt;https://evil.example/pay/${OPEN}&gt;\` is a link to \`evil.example\`; payment links are on \`${pay.host}\`, like \`${pay.origin}/pay/&lt;id&gt;\`. Paste one of those, or the invoice id.`,
    );
    expect(outcome).toBe('invalid_input');
    expect(env.sandbox.requests).toEqual([]);
  });
});

describe('/balance with words it does not take', () => {
  it('names `foo` in `/balance foo bar`, rather than showing its help without a word', async () => {
    const { text, outcome } = await run('/balance', 'foo bar');
    expect(text).toBe(
      `:warning: *Not something /balance does*\n\`foo\` is not a word \`/balance\` knows. ${BALANCE_TAKES}`,
    );
    expect(outcome).toBe('usage');
    expect(env.sandbox.requests).toEqual([]);
  });

  it('suggests `subscribe` for `subscibe 08:30`, with the time kept', async () => {
    const { text } = await run('/balance', 'subscibe 08:30');
    expect(text).toContain('Did you mean `/balance subscribe 08:30`?');
    expect(env.poster.calls).toEqual([]);
  });
});
