import type { RespondArguments } from '@slack/bolt';
import { beforeEach, describe, expect, it } from 'vitest';
import { createBalanceCommand } from '../../src/listeners/commands/balance.js';
import { commandListener } from '../../src/pipeline/kinds.js';
import { num } from '../../src/sandbox/data.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { tableRows } from '../support/block-kit-charts.js';
import { commandArgs } from '../support/bolt.js';
import { NOW, polledAt } from '../support/factories.js';
import { useSandbox } from '../support/use-sandbox.js';

/** `/balance` with more currencies than one section of fields holds: one table, the coins that moved most first. */
const env = useSandbox();

async function balance(): Promise<RespondArguments> {
  const deps = env.deps();
  const { args, rec } = commandArgs({ command: '/balance', text: '' });
  await commandListener(deps, '/balance', createBalanceCommand(deps))(args);
  return (rec.acks[0] ?? rec.responses[0]) as RespondArguments;
}

/** Sixty coins as the service may send them, COIN7 the one that moved most since a day ago. */
const coins = (balance7: string) =>
  Array.from({ length: 60 }, (_, i) => ({
    id: `COIN${i}`,
    title: `Coin ${i}`,
    balance: num(i === 7 ? balance7 : `${1000 + i}.25`),
  }));

describe('/balance with sixty currencies', () => {
  beforeEach(() => env.store.db.deleteFrom('balance_history').execute());

  it('answers with one table: coin, balance and change over 24 h against the feed’s reading, most moved first', async () => {
    const dayAgo = Object.fromEntries(
      coins('1').map((c) => [c.id, { title: c.title, balance: c.balance.toString() }]),
    );
    await env.store.db
      .insertInto('balance_history')
      .values({ taken_at: NOW.getTime() - 25 * 3_600_000, balances: JSON.stringify(dayAgo) })
      .execute();
    await polledAt(env.store, NOW.getTime() - 30_000);
    env.sandbox.setBalances(coins('1234567.000000000000000001'));
    const reply = await balance();
    expectValidMessage(reply);
    const rows = tableRows(reply);
    expect(rows).toHaveLength(61);
    expect(rows.slice(0, 3)).toEqual([
      ['Coin', 'Balance', 'Change in 24 h'],
      ['COIN7', '1,234,567.000000000000000001', '+1,234,566.000000000000000001'],
      ['COIN0', '1,000.25', '0'],
    ]);
    expect(reply.text).toContain('1234567.000000000000000001 COIN7');
    expect(visibleText(reply)).not.toContain('*Coin 0*');
  });

  it('says no change where no poll read the balance since a day before (the feed stopped), though a reading is kept', async () => {
    const dayAgo = Object.fromEntries(coins('1').map((c) => [c.id, { title: c.title, balance: '0' }]));
    await env.store.db
      .insertInto('balance_history')
      .values({ taken_at: NOW.getTime() - 3 * 86_400_000, balances: JSON.stringify(dayAgo) })
      .execute();
    await polledAt(env.store, NOW.getTime() - 2 * 86_400_000);
    env.sandbox.setBalances(coins('5'));
    const rows = tableRows(await balance());
    expect(rows[1]).toEqual(['COIN0', '1,000.25', '—']);
    // A poll since the day before: the kept reading is the balance then.
    await polledAt(env.store, NOW.getTime() - 60_000);
    expect(tableRows(await balance()).find((r) => r[0] === 'COIN0')).toEqual([
      'COIN0',
      '1,000.25',
      '+1,000.25',
    ]);
  });

  it('says no change where the feed has no reading of a day before', async () => {
    env.sandbox.setBalances(coins('5'));
    const rows = tableRows(await balance());
    expect(rows[1]).toEqual(['COIN0', '1,000.25', '—']);
  });

  it('keeps the fields for a few currencies', async () => {
    env.sandbox.setBalances(coins('5').slice(0, 3));
    const reply = await balance();
    expect(tableRows(reply)).toEqual([]);
    expect(visibleText(reply)).toContain('*Coin 0*\n1,000.25 COIN0');
  });
});
