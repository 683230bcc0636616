import { describe, expect, it } from 'vitest';
import { BALANCE_TITLE, balanceMessage, NO_BALANCES } from '../../src/views/balance.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';
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

  it('fits 60 currencies into one valid message without dropping any', () => {
    const entries = Array.from({ length: 60 }, (_, i) =>
      balanceEntry(`COIN${i}`, `${i}.1234567`, `Coin number ${i}`),
    );
    const message = balanceMessage(entries, NOW);
    expectValidMessage(message);
    expect(fieldsOf(message)).toHaveLength(60);
    expect(visibleText(message)).not.toContain('not shown');
  });

  it('with more than truncate, stays valid and says how many were left out', () => {
    const hostile = Array.from({ length: 500 }, (_, i) =>
      balanceEntry(`${'&'.repeat(60)}${i}`, `${'9'.repeat(150)}.1234567`, `<!channel> ${'&'.repeat(5000)}`),
    );
    const message = balanceMessage(hostile, NOW);
    expectValidMessage(message);
    const shown = fieldsOf(message).length;
    expect(shown).toBeGreaterThan(0);
    expect(shown).toBeLessThan(500);
    expect(visibleText(message)).toContain(`${500 - shown} more currencies not shown`);
  });

  it('reports blocks, not just characters, as the limit: 1,000 tiny currencies', () => {
    const message = balanceMessage(
      Array.from({ length: 1000 }, (_, i) => balanceEntry(`C${i}`, '1')),
      NOW,
    );
    expectValidMessage(message);
    expect(visibleText(message)).toMatch(/\d+ more currencies not shown/);
  });

  it('builds only the rows that fit: 20,000 currencies cost no more than a few hundred', () => {
    let titlesRead = 0;
    const entries = Array.from({ length: 20_000 }, (_, i) => {
      const entry = balanceEntry(`C${i}`, `${i}.5`);
      return Object.defineProperty(entry, 'title', {
        get: () => {
          titlesRead += 1;
          return `Coin ${i}`;
        },
      });
    });
    const message = balanceMessage(entries, NOW);
    expectValidMessage(message);
    const shown = fieldsOf(message).length;
    expect(titlesRead).toBe(shown + 1); // the rows shown, and the one that did not fit
    expect(visibleText(message)).toContain(`${20_000 - shown} more currencies not shown`);
  });

  it('spends exactly the 12,000-character budget: 308 rows of 7 characters, not one more', () => {
    // Each row "*T*\n1 X" is 7 characters and costs 7 + 30; 600 are kept for the rest.
    const entries = Array.from({ length: 400 }, () => balanceEntry('X', '1', 'T'));
    const message = balanceMessage(entries, NOW);
    expectValidMessage(message);
    expect(fieldsOf(message)).toHaveLength(Math.floor((12_000 - 600) / 37));
    expect(fieldsOf(message)).toHaveLength(308);
    expect(visibleText(message)).toContain('92 more currencies not shown');
  });

  it('says "currency" for one left out', () => {
    const entries = Array.from({ length: 309 }, () => balanceEntry('X', '1', 'T'));
    expect(visibleText(balanceMessage(entries, NOW))).toContain('1 more currency not shown');
  });

  it('escapes titles and ids from the service', () => {
    const message = balanceMessage([balanceEntry('<@U1>', '1', '<!channel> & <https://evil|Click>')], NOW);
    expectValidMessage(message);
    expect(fieldsOf(message)[0]).toBe('*&lt;!channel&gt; &amp; &lt;https://evil|Click&gt;*\n1 &lt;@U1&gt;');
  });
});
