import { describe, expect, it } from 'vitest';
import {
  invoiceCardEntity,
  invoicePanelEntity,
  invoiceRefId,
  localeDigits,
  MAX_LISTED,
  panelLocale,
  panelRefusal,
  parseInvoiceRefId,
} from '../../src/views/invoice-entity.js';
import { amount, INVOICE_ID, invoice, NOW } from '../support/factories.js';

describe('an invoice’s Work Object ref', () => {
  it('is the invoice id scoped to its installation, and reads back', () => {
    expect(invoiceRefId('', INVOICE_ID)).toBe(`workspace:${INVOICE_ID}`);
    expect(invoiceRefId('T0HOME', INVOICE_ID)).toBe(`T0HOME:${INVOICE_ID}`);
    expect(parseInvoiceRefId(`workspace:${INVOICE_ID}`)).toEqual({ installation: '', invoiceId: INVOICE_ID });
    expect(parseInvoiceRefId(`E0ORG:${INVOICE_ID}`)).toEqual({
      installation: 'E0ORG',
      invoiceId: INVOICE_ID,
    });
  });

  it.each([INVOICE_ID, `:${INVOICE_ID}`, `t0lower:${INVOICE_ID}`, `T0/../x:${INVOICE_ID}`])(
    'reads %s as no ref the bot wrote',
    (id) => expect(parseInvoiceRefId(id)).toBeUndefined(),
  );
});

describe('amounts and dates in the opener’s locale', () => {
  it.each([
    ['1234567.8900', 'de-DE', '1.234.567,8900'],
    ['1234567.8900', 'en-US', '1,234,567.8900'],
    ['-1000', 'en-GB', '-1,000'],
    ['0.00000001', 'de-DE', '0,00000001'],
    [
      '123456789012345678901234567890.123456789',
      'en-US',
      '123,456,789,012,345,678,901,234,567,890.123456789',
    ],
  ])('%s in %s reads %s: every digit kept', (plain, locale, expected) => {
    expect(localeDigits(plain, locale)).toBe(expected);
    expect(localeDigits(plain, locale).replace(/\D/g, '')).toBe(plain.replace(/\D/g, ''));
  });

  it('takes Slack’s en_US form and falls back to en-US for a tag it cannot read', () => {
    expect(panelLocale('en_US')).toBe('en-US');
    expect(panelLocale('not a locale!')).toBe('en-US');
  });
});

describe('the card’s entity', () => {
  it('shows no expiry once the invoice is final, and colours a paid one', () => {
    const entity = invoiceCardEntity(invoice({ status: 'closed', payStatus: 'paid' }), { installation: '' });
    const fields = entity.entity_payload.custom_fields ?? [];
    expect(fields.map((f) => f.key)).toEqual(['status', 'payment', 'amount']);
    expect(fields[0]).toMatchObject({ value: 'Closed', tag_color: 'green' });
  });

  it('keeps the amount’s digits as the service sent them', () => {
    const entity = invoiceCardEntity(invoice({ amount: amount('1520.500') }), { installation: '' });
    expect(entity.entity_payload.custom_fields?.find((f) => f.key === 'amount')?.value).toMatch(
      /^1520\.500 /,
    );
  });
});

describe('the side panel’s entity', () => {
  const watches = Array.from({ length: MAX_LISTED + 3 }, (_, i) => ({
    channelId: `C0${i}`,
    startedAt: NOW,
  }));

  it('lists the latest watches, whole lines only, and says how many earlier ones it left out', () => {
    const panel = invoicePanelEntity(invoice(), {
      installation: '',
      locale: 'en-US',
      watches,
      seen: [],
      watchable: true,
    });
    const watched = panel.entity_payload.custom_fields?.find((f) => f.key === 'watched')?.value as string;
    const [note = '', ...lines] = watched.split('\n');
    const left = Number(/^\((\d+) earlier not shown\)$/.exec(note)?.[1]);
    expect(left + lines.length).toBe(watches.length);
    expect(lines.length).toBeLessThanOrEqual(MAX_LISTED);
    for (const line of lines) expect(line).toMatch(/^<#C0\d+> since .+ UTC$/);
    expect(lines.at(-1)).toContain(`<#C0${watches.length - 1}>`);
  });

  it('offers no Watch where it was not opened from a conversation', () => {
    const panel = invoicePanelEntity(invoice(), {
      installation: '',
      locale: 'en-US',
      watches: [],
      seen: [],
      watchable: true,
    });
    expect(panel.entity_payload.actions?.primary_actions?.map((a) => a.text)).toEqual(['Refresh']);
  });
});

describe('a refused opener', () => {
  it('gets Slack’s restricted view, with the reason in words', () => {
    expect(panelRefusal('guest').status).toBe('restricted');
    expect(panelRefusal('other_workspace').custom_message).not.toMatch(/guest/i);
  });
});
