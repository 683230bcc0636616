import { describe, expect, it } from 'vitest';
import { AccessDeniedError } from '../../src/access.js';
import {
  CircuitOpenError,
  InvalidApiKeyError,
  InvoiceNotFoundError,
  PaymentTimeoutError,
  RateLimitedError,
  ServiceError,
  ServiceUnavailableError,
  UnexpectedResponseError,
} from '../../src/payments/index.js';
import { errorMessage, invalidInvoiceMessage } from '../../src/views/errors.js';
import { balanceHelp, invoiceHelp, invoiceUsage } from '../../src/views/help.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';

describe('errorMessage', () => {
  it.each<[string, unknown, string[]]>([
    [
      'not found',
      new InvoiceNotFoundError('aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee', { status: 400 }),
      ['Invoice not found', 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee'],
    ],
    [
      'a bad key',
      new InvalidApiKeyError({ status: 401 }),
      ['rejected the bot’s API key', '`PAYMENT_API_KEY`'],
    ],
    ['rate limiting', new RateLimitedError(120_000, { status: 429 }), ['busy', 'Try again in 2 minutes']],
    [
      'rate limiting without a hint',
      new RateLimitedError(undefined, { status: 429 }),
      ['Try again in a minute'],
    ],
    ['a timeout', new PaymentTimeoutError(8000, {}), ['did not answer in time']],
    [
      'an outage',
      new ServiceUnavailableError('HTTP 503', { status: 503 }),
      ['unavailable', 'Try again in a few minutes'],
    ],
    [
      'the service not answering (breaker open)',
      new CircuitOpenError(),
      ['The payment service is not answering', 'The bot will keep trying', 'Try again in a few minutes'],
    ],
    ['a garbled answer', new UnexpectedResponseError({ detail: 'x' }), ['could not read']],
    [
      'another error',
      new ServiceError('ForbiddenError', 'project <b> disabled', { status: 403 }),
      ['HTTP 403: project &lt;b&gt; disabled'],
    ],
    ['another workspace', new AccessDeniedError('other_workspace'), ['only for members of this workspace']],
    [
      'a feed in a direct message',
      new AccessDeniedError('direct_message'),
      ['The payments feed cannot go to a direct message', 'in a private channel for finance'],
    ],
    [
      'a feed in a shared channel',
      new AccessDeniedError('shared_channel'),
      ['The payments feed cannot go to a shared channel', 'shared with another organisation'],
    ],
    [
      'a feed in a public channel',
      new AccessDeniedError('public_channel'),
      ['The payments feed needs a private channel', '`BALANCE_ALLOWED_CHANNELS`'],
    ],
    [
      'an unlisted user',
      new AccessDeniedError('user_not_allowed'),
      ['not allowed to see the balance', '`BALANCE_ALLOWED_USERS`'],
    ],
    [
      'a wrong channel',
      new AccessDeniedError('channel_not_allowed', ['C0FIN', 'bogus']),
      ['not available in this channel', '<#C0FIN>, bogus'],
    ],
    ['a bug', new TypeError('x is undefined'), ['Something went wrong inside the bot']],
  ])('explains %s in a valid message', (_label, error, expected) => {
    const message = errorMessage(error);
    expectValidMessage(message);
    for (const phrase of expected) expect(visibleText(message)).toContain(phrase);
    expect(visibleText(message)).not.toContain('x is undefined'); // internals stay in the logs
  });

  it('names no setting where nobody sets one (a workspace of many), for a feed in a public channel', () => {
    const text = visibleText(errorMessage(new AccessDeniedError('public_channel', [], 'start_feed', false)));
    expect(text).toContain('Use a private channel, with the bot invited');
    expect(text).not.toContain('BALANCE_ALLOWED_CHANNELS');
    expect(text).not.toContain('admin');
  });

  it('prefixes a failed refresh', () => {
    const message = errorMessage(new PaymentTimeoutError(8000, {}), 'Could not refresh the invoice');
    expect(message.text).toMatch(
      /^Could not refresh the invoice: the payment service did not answer in time\./,
    );
  });

  it('quotes a 5,000-character input cut short', () => {
    const message = invalidInvoiceMessage('`x'.repeat(2500));
    expectValidMessage(message);
    expect(visibleText(message).length).toBeLessThan(700);
  });

  it('quotes bad input back escaped', () => {
    const message = invalidInvoiceMessage('hello <!channel>');
    expectValidMessage(message);
    expect(visibleText(message)).toContain('`hello &lt;!channel&gt;`');
  });
});

describe('help', () => {
  it.each([
    ['/balance help', balanceHelp()],
    ['/invoice help', invoiceHelp('in_channel')],
    ['/invoice usage', invoiceUsage()],
  ])('%s is a valid message', (_label, message) => {
    expectValidMessage(message);
  });

  it('tells whether the channel will see invoice replies', () => {
    expect(visibleText(invoiceHelp('in_channel'))).toContain('everyone in the channel sees the reply');
    expect(visibleText(invoiceHelp('ephemeral'))).toContain('only you see the reply');
  });
});

describe('AccessDeniedError', () => {
  it('is named, and says which refusal in its message (for the logs)', () => {
    const error = new AccessDeniedError('channel_not_allowed', ['C0FIN']);
    expect(error.name).toBe('AccessDeniedError');
    expect(error.message).toBe('read_balance refused: channel_not_allowed');
    expect(error.code).toBe('channel_not_allowed');
  });
});
