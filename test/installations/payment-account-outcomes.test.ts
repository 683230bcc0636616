import { describe, expect, it } from 'vitest';
import { num } from '../../src/sandbox/data.js';
import { keySubmissionBody } from '../support/workspace-requests.js';
import { useWorkspacesBot, type Workspace, workspace } from '../support/workspaces-bot.js';

/**
 * What an operator reads of the payment account's requests (the Connect and Disconnect clicks,
 * the modal's submission): each one's outcome, and no refusal where there was none; and a
 * submission whose key input Slack sends empty or without its value.
 */
const many = useWorkspacesBot();

async function installedWith(name: string): Promise<{ w: Workspace; key: string }> {
  const w = workspace(name);
  many.bot.slack.people.set(w.installer, { team_id: w.team });
  expect((await many.bot.install(w)).status).toBe(200);
  const key = `merchant-${name}-unit-key-3e2d1c0b`;
  many.bot.sandbox.addMerchant(key, {
    balances: [{ id: 'XMR', title: 'Monero', balance: num('1') }],
    invoices: [],
  });
  return { w, key };
}

/** The request line of `name` written after log line `from`, once the request is done. */
const requestLine = (name: string, from: number) => many.bot.logged(name, from);

describe('the payment account’s requests, as the log tells them', () => {
  it('logs a Connect click of the installer as ok, with no refusal', async () => {
    const { w } = await installedWith('clickok');
    const from = many.bot.logs.length;
    await many.bot.click(w, w.installer, 'connect_payment_account');
    expect(await requestLine('action connect_payment_account', from)).toMatchObject({ outcome: 'ok' });
    expect(many.bot.logs.slice(from).filter((l) => l.level === 'warn')).toEqual([]);
  });

  it('logs a rejected key as invalid_input, a good one and a disconnect as ok', async () => {
    const { w, key } = await installedWith('submitted');
    let from = many.bot.logs.length;
    await many.bot.submitKey(w, w.installer, 'not-the-merchants-key-1111');
    expect(await requestLine('view payment_account', from)).toMatchObject({ outcome: 'invalid_input' });
    from = many.bot.logs.length;
    await many.bot.submitKey(w, w.installer, key);
    expect(await requestLine('view payment_account', from)).toMatchObject({ outcome: 'ok' });
    from = many.bot.logs.length;
    await many.bot.click(w, w.installer, 'disconnect_payment_account');
    expect(await requestLine('action disconnect_payment_account', from)).toMatchObject({ outcome: 'ok' });
    expect(await many.bot.installations.paymentKeyOf(w.team)).toBeUndefined();
  });

  it('refuses, as a rejected key, a key input Slack sends empty or without its value', async () => {
    const { w } = await installedWith('novalue');
    const submitted = JSON.parse(
      decodeURIComponent(keySubmissionBody(w, w.installer, '').slice('payload='.length)),
    ) as { view: { state: { values: Record<string, unknown> } } };
    for (const values of [
      { api_key: { api_key: { type: 'plain_text_input', value: null } } },
      { api_key: {} },
    ]) {
      submitted.view.state.values = values;
      const shown = (await many.bot.post(`payload=${encodeURIComponent(JSON.stringify(submitted))}`)).json();
      expect(JSON.stringify(shown)).toMatch(
        /^\{"response_action":"errors","errors":\{"api_key":"The payment service rejected this key/,
      );
    }
    expect(await many.bot.installations.paymentKeyOf(w.team)).toBeUndefined();
  });

  it('checks keys apart from the workspaces’ own calls: failed checks do not stop another workspace’s balance', async () => {
    const steady = await installedWith('steady');
    await many.bot.submitKey(steady.w, steady.w.installer, steady.key);
    const { w: trying } = await installedWith('trying');
    // The service fails every check, more times than it takes to open a breaker.
    many.bot.sandbox.failNext({ kind: 'status', status: 503 }, 100);
    try {
      for (let i = 0; i < 6; i += 1) {
        const { errors } = (
          await many.bot.submitKey(trying, trying.installer, `merchant-trying-${i}-key-9f8e7d6c`)
        ).json() as {
          errors: { api_key: string };
        };
        expect(errors.api_key).toContain('The key could not be checked');
      }
    } finally {
      many.bot.sandbox.clearFaults();
    }
    expect(JSON.stringify((await many.bot.command(steady.w, steady.w.installer, '')).reply)).toContain(
      'Monero',
    );
  });
});
