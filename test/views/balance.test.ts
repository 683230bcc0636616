import { describe, expect, it } from 'vitest';
import { BALANCE_TITLE, balanceMessage, NO_BALANCES } from '../../src/views/balance.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
import { tableRows } from '../support/block-kit-charts.js';
import { balanceEntry, NOW } from '../support/factories.js';

const fieldsOf = (message: ReturnType<typeof balanceMessage>) =>
  message.blocks.flatMap((b) => (b.type === 'section' && b.fields ? b.fields.map((f) => f.text) : []));

describe('balanceMessage', () => {
  it('lists the funded currencies, every digit grouped for reading, and folds those at 0 into one line', () => {
    const message = balanceMessage(
      [
        balanceEntry('BTC', '0.0123456', 'Bitcoin'),
        balanceEntry('ETH', '0', 'Ethereum'),
        balanceEntry('LTC', '0.0000001', 'Litecoin'),
        balanceEntry('DOGE', '9007199254740993', 'Dogecoin'),
        balanceEntry('TRX', '0.0000000', 'TRON'),
      ],
      NOW,
    );
    expectValidMessage(message);
    expect(fieldsOf(message)).toEqual([
      '*Bitcoin*\n0.0123456 BTC',
      '*Litecoin*\n0.0000001 LTC',
      '*Dogecoin*\n9,007,199,254,740,993 DOGE',
    ]);
    expect(visibleText(message)).toContain('and 2 more at 0');
    expect(visibleText(message)).not.toMatch(/Ethereum|TRON|\bETH\b|\bTRX\b/);
    expect(message.blocks[0]).toMatchObject({ type: 'header', text: { text: BALANCE_TITLE } });
    // The notification text, which a copy or a screen reader gets, keeps the digits ungrouped.
    expect(message.text).toBe(`${BALANCE_TITLE}: 0.0123456 BTC, 0.0000001 LTC, 9007199254740993 DOGE`);
  });

  it('says the total covers all projects and when it was read, as a date each reader sees locally', () => {
    const text = visibleText(balanceMessage([balanceEntry('BTC', '1')], NOW));
    expect(text).toContain(
      'Total across all projects · read <!date^1795262400^{date_short_pretty} at {time}|',
    );
  });

  it('answers an account with no currencies kindly', () => {
    const message = balanceMessage([], NOW);
    expectValidMessage(message);
    expect(visibleText(message)).toContain(
      'Your account holds no cryptocurrency yet. Balances appear here once customers pay invoices in any of your projects.',
    );
    expect(message.text).toBe(`Balance across all projects: ${NO_BALANCES}`);
  });

  it('says "all zero" in the notification text when nothing holds funds, and counts them in one line', () => {
    const message = balanceMessage([balanceEntry('BTC', '0'), balanceEntry('ETH', '0.00')], NOW);
    expectValidMessage(message);
    expect(message.text).toBe(`${BALANCE_TITLE}: all zero`);
    expect(visibleText(message)).toContain('No currency holds funds yet.');
    expect(visibleText(message)).toContain('2 currencies at 0');
    expect(fieldsOf(message)).toEqual([]);
  });

  it('groups a huge, negative or long-fractioned amount without changing a digit', () => {
    const message = balanceMessage(
      [balanceEntry('DOGE', '1234567.89'), balanceEntry('X', '-1000000.000000000000000001')],
      NOW,
    );
    expect(fieldsOf(message)).toEqual(['*DOGE*\n1,234,567.89 DOGE', '*X*\n-1,000,000.000000000000000001 X']);
    expect(message.text).toBe(`${BALANCE_TITLE}: 1234567.89 DOGE, -1000000.000000000000000001 X`);
  });

  it('lists 60 currencies in one table, none dropped, and folds those at 0 after it', () => {
    const entries = [
      ...Array.from({ length: 60 }, (_, i) =>
        balanceEntry(`COIN${i}`, `${i + 1}000.1234567`, `Coin number ${i}`),
      ),
      balanceEntry('ZERO', '0'),
    ];
    const message = balanceMessage(entries, NOW);
    expectValidMessage(message);
    expect(fieldsOf(message)).toEqual([]);
    expect(tableRows(message)).toHaveLength(61);
    expect(tableRows(message)[0]).toEqual(['Coin', 'Balance', 'Change in 24 h']);
    expect(tableRows(message)[60]).toEqual(['COIN59', '60,000.1234567', '—']);
    expect(visibleText(message)).not.toContain('not shown');
    expect(visibleText(message)).toContain('and 1 more at 0');
  });

  it('sorts the table by what moved most in 24 hours, every digit kept, amounts right-aligned', () => {
    const entries = Array.from({ length: 12 }, (_, i) => balanceEntry(`C${i}`, `${100 + i}`));
    entries.push(balanceEntry('BIG', '1000000.000000000000000001'));
    const dayAgo = Object.fromEntries(
      entries.map((e) => [e.id, { title: e.title, balance: e.balance.toString() }]),
    );
    dayAgo.C3 = { title: 'C3', balance: '1' }; // 1 → 103: moved most
    dayAgo.BIG = { title: 'BIG', balance: '500000' }; // halved a day ago: next
    delete dayAgo.C7; // no reading of it a day ago: it rose from 0, as far as moved
    const message = balanceMessage(entries, NOW, dayAgo);
    expectValidMessage(message);
    expect(tableRows(message).slice(1, 5)).toEqual([
      ['C7', '107', '+107'],
      ['C3', '103', '+102'],
      ['BIG', '1,000,000.000000000000000001', '+500,000.000000000000000001'],
      ['C0', '100', '0'],
    ]);
    const [table] = message.attachments?.[0]?.blocks ?? [];
    expect(table).toMatchObject({
      column_settings: [{ align: 'left' }, { align: 'right' }, { align: 'right' }],
    });
    expect(message.text).toContain('1000000.000000000000000001 BIG');
  });

  it('with more than a table holds, stays valid and says how many were left out', () => {
    const hostile = Array.from({ length: 500 }, (_, i) =>
      balanceEntry(`${'&'.repeat(60)}${i}`, `${'9'.repeat(150)}.1234567`, `<!channel> ${'&'.repeat(5000)}`),
    );
    const message = balanceMessage(hostile, NOW);
    expectValidMessage(message);
    const shown = tableRows(message).length - 1;
    expect(shown).toBeGreaterThan(0);
    expect(shown).toBeLessThan(500);
    expect(visibleText(message)).toContain(`${500 - shown} more currencies not shown`);
    // The text names only whole amounts: none is cut.
    const amounts = message.text.slice(`${BALANCE_TITLE}: `.length).split(', ');
    expect(amounts.length).toBeGreaterThan(5);
    for (const part of amounts) expect(part.startsWith(`${'9'.repeat(150)}.1234567 `)).toBe(true);
  });

  it('shows at most 99 rows under the header: 20,000 currencies', () => {
    const message = balanceMessage(
      Array.from({ length: 20_000 }, (_, i) => balanceEntry(`C${i}`, `${i}.5`)),
      NOW,
    );
    expectValidMessage(message);
    expect(tableRows(message)).toHaveLength(100);
    expect(visibleText(message)).toContain('19901 more currencies not shown');
  });

  it('says "currency" for one left out', () => {
    const entries = Array.from({ length: 100 }, () => balanceEntry('X', '1', 'T'));
    expect(visibleText(balanceMessage(entries, NOW))).toContain('1 more currency not shown');
  });

  it('escapes titles and ids from the service', () => {
    const message = balanceMessage([balanceEntry('<@U1>', '1', '<!channel> & <https://evil|Click>')], NOW);
    expectValidMessage(message);
    expect(fieldsOf(message)[0]).toBe('*&lt;!channel&gt; &amp; &lt;https://evil|Click&gt;*\n1 &lt;@U1&gt;');
  });

  it('keeps the order of currencies that moved alike in 24 hours, however many', () => {
    const ids = Array.from({ length: 90 }, (_, i) => `C${(i * 37) % 90}`);
    const was = ['5', '10', '8']; // halved, unmoved, up a quarter: three groups moved alike
    const message = balanceMessage(
      ids.map((id) => balanceEntry(id, '10')),
      NOW,
      Object.fromEntries(ids.map((id, i) => [id, { title: id, balance: was[i % 3] ?? '10' }])),
    );
    const group = (g: number) => ids.filter((_, i) => i % 3 === g);
    expect(tableRows(message).map((r) => r[0])).toEqual(['Coin', ...group(0), ...group(2), ...group(1)]);
  });

  it('shows a currency the service names with an empty id as "—", never an empty cell', () => {
    const entries = Array.from({ length: 11 }, (_, i) => balanceEntry(i === 0 ? '' : `C${i}`, '1', 'T'));
    const message = balanceMessage(entries, NOW);
    expectValidMessage(message);
    expect(tableRows(message)[1]).toEqual(['—', '1', '—']);
  });

  it('fills the table up to exactly 10,000 characters and counts the row past it', () => {
    // Header "Coin", "Balance", "Change in 24 h": 25 characters; a row is its id (40), balance, "—".
    const entry = (i: number, digits: number) =>
      balanceEntry(`${'C'.repeat(38)}${`${i}`.padStart(2, '0')}`, `0.${'1'.repeat(digits)}`);
    const full = [...Array.from({ length: 97 }, (_, i) => entry(i, 59)), entry(97, 38)]; // 97 × 102 + 81 + 25
    const message = balanceMessage([...full, entry(98, 1)], NOW);
    expectValidMessage(message);
    const rows = tableRows(message);
    expect(rows.flat().join('')).toHaveLength(10_000);
    expect(rows).toHaveLength(99);
    expect(visibleText(message)).toContain('1 more currency not shown');
  });
});
