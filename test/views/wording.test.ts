import { describe, expect, it } from 'vitest';
import { AccessDeniedError } from '../../src/access.js';
import {
  BusyError,
  InvalidApiKeyError,
  InvoiceNotFoundError,
  PaymentTimeoutError,
  RateLimitedError,
  ServiceError,
  ServiceUnavailableError,
  UnexpectedResponseError,
} from '../../src/payments/index.js';
import { errorMessage, invalidInvoiceMessage, waitInWords } from '../../src/views/errors.js';
import { balanceHelp, invoiceHelp, invoiceUsage } from '../../src/views/help.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';

/** Every error and help message, word for word: what support staff read is part of the contract. */

const ADMIN_LOGS = 'If it keeps happening, tell the bot’s admin: the details are in the bot’s logs.';

describe('error messages', () => {
  it.each<[string, unknown, string, string]>([
    [
      'an unknown invoice',
      new InvoiceNotFoundError('aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee', {}),
      'Invoice not found',
      "The payment service has no invoice `aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee`. Check the id or link; an invoice made under another merchant account cannot be read with this bot's key.",
    ],
    [
      'a rejected key',
      new InvalidApiKeyError({}),
      'The payment service rejected the bot’s API key',
      'The bot cannot read invoices or balances until this is fixed. An admin of this bot should check its API key: `PAYMENT_API_KEY` in its configuration, or *Replace key* on the app’s Home tab where the workspace connected its own account. Any active project’s key works.',
    ],
    [
      'rate limiting',
      new RateLimitedError(120_000, {}),
      'The payment service is busy',
      'It is receiving too many requests right now. Try again in 2 minutes.',
    ],
    [
      'a full queue',
      new BusyError(3),
      'The bot is answering too many requests right now',
      'Try again in a minute.',
    ],
    [
      'a timeout',
      new PaymentTimeoutError(8000, {}),
      'The payment service did not answer in time',
      'Try again in a minute. If it keeps happening, the service may be having trouble.',
    ],
    [
      'an outage',
      new ServiceUnavailableError('x', {}),
      'The payment service is unavailable',
      'It could not be reached or is failing right now. Try again in a few minutes.',
    ],
    [
      'a garbled answer',
      new UnexpectedResponseError({ detail: 'x' }),
      'The payment service sent an answer the bot could not read',
      `Try again later. ${ADMIN_LOGS}`,
    ],
    [
      'another service error',
      new ServiceError('F', 'project <b> disabled', { status: 403 }),
      'The payment service answered with an error',
      'HTTP 403: project &lt;b&gt; disabled. Try again later, or tell the bot’s admin if it keeps happening.',
    ],
    [
      'a service error without a message',
      new ServiceError(undefined, undefined, { status: 404 }),
      'The payment service answered with an error',
      'HTTP 404. Try again later, or tell the bot’s admin if it keeps happening.',
    ],
    [
      'another workspace',
      new AccessDeniedError('other_workspace'),
      'The balance is only for members of this workspace',
      '`/balance` shows the merchant’s financial data, so it cannot be used from another organisation, for example in a shared channel.',
    ],
    [
      'an unlisted person',
      new AccessDeniedError('user_not_allowed'),
      'You are not allowed to see the balance',
      'Only the people the bot’s admin listed can use `/balance`. Ask the admin to add you to `BALANCE_ALLOWED_USERS`.',
    ],
    [
      'an unlisted channel',
      new AccessDeniedError('channel_not_allowed', ['C0FIN', 'bogus']),
      'The balance is not available in this channel',
      '`/balance` only works in the channels the bot’s admin set for it. Use it in <#C0FIN>, bogus.',
    ],
    [
      'an unlisted channel with no list to offer',
      new AccessDeniedError('channel_not_allowed'),
      'The balance is not available in this channel',
      '`/balance` only works in the channels the bot’s admin set for it.',
    ],
    [
      'a bug',
      new TypeError('x is undefined'),
      'Something went wrong inside the bot',
      `Try again. ${ADMIN_LOGS}`,
    ],
  ])('explains %s', (_label, error, heading, body) => {
    const message = errorMessage(error);
    expectValidMessage(message);
    expect(message.text).toBe(`${heading}. ${body}`);
    expect(message.blocks).toEqual([
      { type: 'section', text: { type: 'mrkdwn', text: `:warning: *${heading}*\n${body}` } },
    ]);
  });

  it('lists at most 20 channels where /balance works', () => {
    const channels = Array.from({ length: 25 }, (_, i) => `C0${String(i).padStart(3, '0')}`);
    const { text } = errorMessage(new AccessDeniedError('channel_not_allowed', channels));
    expect(text).toContain('<#C0019>.');
    expect(text).not.toContain('<#C0020>');
  });

  it('prefixes a failed refresh, lower-casing the title', () => {
    expect(errorMessage(new PaymentTimeoutError(8000, {}), 'Could not refresh the invoice').text).toBe(
      'Could not refresh the invoice: the payment service did not answer in time. Try again in a minute. If it keeps happening, the service may be having trouble.',
    );
  });

  it('quotes input that is not an invoice id, backticks turned to quotes', () => {
    const message = invalidInvoiceMessage('order `1042`');
    expect(message.text).toBe(
      "That is not an invoice id. `order '1042'` is not an invoice id or payment link. An invoice id looks like `3fa85f64-5717-4562-b3fc-2c963f66afa6`; you can also paste the invoice's payment link.",
    );
  });
});

describe('waits in words', () => {
  it.each<[number | undefined, string]>([
    [undefined, 'in a minute'],
    [0, 'in a minute'],
    [60_000, 'in a minute'],
    [60_001, 'in 2 minutes'],
    [59 * 60_000, 'in 59 minutes'],
    [59 * 60_000 + 1, 'in an hour'],
    [60 * 60_000, 'in an hour'],
    [60 * 60_000 + 1, 'in 2 hours'],
    [6 * 3_600_000, 'in 6 hours'],
  ])('%s ms reads "%s"', (ms, words) => {
    expect(waitInWords(ms)).toBe(words);
  });

  it('tells a person the capped wait, never a year', () => {
    expect(errorMessage(new RateLimitedError(6 * 3_600_000, {})).text).toBe(
      'The payment service is busy. It is receiving too many requests right now. Try again in 6 hours.',
    );
  });
});

describe('help', () => {
  it('/balance help', () => {
    const message = balanceHelp();
    expectValidMessage(message);
    expect(message.text).toBe(
      "`/balance` shows the merchant's balance in each cryptocurrency, summed over all projects (shops). Only you see the reply.\nCurrencies holding funds come first; zero balances are listed after them. Balances are not frozen: everything shown is available for withdrawal.",
    );
    expect(message.blocks[0]).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: '/balance', emoji: true },
    });
    expect(message.blocks[3]).toEqual({
      type: 'context',
      elements: [
        { type: 'mrkdwn', text: "Access may be limited to some people and channels by the bot's admin." },
      ],
    });
  });

  it.each([
    ['in_channel', 'everyone in the channel sees the reply'],
    ['ephemeral', 'only you see the reply'],
  ] as const)('/invoice help when replies are %s', (visibility, who) => {
    const message = invoiceHelp(visibility);
    expectValidMessage(message);
    expect(message.text).toBe(
      `\`/invoice &lt;id or payment link&gt;\` shows one invoice: its status and payment status, amount and fee, when it was created and when it expires, the accepted cryptocurrencies and the shop. A button opens the payment page; *Refresh* reads the invoice again and updates the message.\n\nExamples:\n• \`/invoice 3fa85f64-5717-4562-b3fc-2c963f66afa6\`\n• \`/invoice https://pay.example.com/pay/3fa85f64-5717-4562-b3fc-2c963f66afa6\`\n\nWhen it works, ${who}. Errors are only shown to you.`,
    );
  });

  it('/invoice with nothing after it', () => {
    expect(invoiceUsage().text).toBe(
      'Give an invoice id or paste a payment link, for example `/invoice 3fa85f64-5717-4562-b3fc-2c963f66afa6`. `/invoice help` tells more.',
    );
  });
});

describe('/invoice help on how long a watch lasts', () => {
  it.each([
    [7, 'after 7 days at most.'],
    [1, 'after 1 day at most.'],
  ])('a watch of at most %i day(s)', (days, phrase) => {
    expect(visibleText(invoiceHelp('ephemeral', days))).toContain(phrase);
  });
});
