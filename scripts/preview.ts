/**
 * `npm run preview`: a Block Kit Builder link for each message the bot sends, built by the real
 * views from the sandbox's demo data fetched through the real client. Prints a Markdown list
 * (the README's "What it looks like" section is this output).
 */
import { Pool } from 'undici';
import { AccessDeniedError } from '../src/access.js';
import {
  createPaymentsClient,
  InvalidApiKeyError,
  InvoiceNotFoundError,
  PaymentTimeoutError,
  RateLimitedError,
  ServiceError,
  ServiceUnavailableError,
  UnexpectedResponseError,
} from '../src/payments/index.js';
import { DEMO_INVOICE_IDS, demoInvoices } from '../src/sandbox/data.js';
import { startSandbox } from '../src/sandbox/server.js';
import { balanceMessage } from '../src/views/balance.js';
import { errorMessage, invalidInvoiceMessage } from '../src/views/errors.js';
import { balanceHelp, invoiceHelp, invoiceUsage } from '../src/views/help.js';
import { invoiceMessage, invoiceUnfurl } from '../src/views/invoice.js';

/** A fixed clock, so the links in the README do not change from run to run. */
const NOW = new Date('2026-11-21T12:00:00.000Z');
const PAY_URL = 'https://pay.example.com';

const builderLink = (message: { blocks: unknown[] }) =>
  `https://app.slack.com/block-kit-builder/#${encodeURIComponent(JSON.stringify({ blocks: message.blocks }))}`;

const sandbox = await startSandbox({
  payUrl: PAY_URL,
  invoices: (payUrl) => demoInvoices(payUrl, NOW.getTime()),
});
const pool = new Pool(sandbox.url);
try {
  const client = createPaymentsClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.apiKey,
    dispatcher: pool,
    userAgent: 'preview',
    timeoutMs: 8000,
  });
  const balance = await client.getBalance();
  const open = await client.getInvoice(DEMO_INVOICE_IDS.open);
  const paid = await client.getInvoice(DEMO_INVOICE_IDS.paid);
  const expired = await client.getInvoice(DEMO_INVOICE_IDS.expired);

  const samples: [string, { blocks: unknown[] }][] = [
    ['`/balance`', balanceMessage(balance, NOW)],
    ['`/balance` with no currencies', balanceMessage([], NOW)],
    ['`/invoice` (open)', invoiceMessage(open, { now: NOW })],
    [
      '`/invoice` (paid: values the document has not seen are shown as sent)',
      invoiceMessage(paid, { now: NOW }),
    ],
    ['`/invoice` after Refresh (expired)', invoiceMessage(expired, { now: NOW, refreshedBy: 'U0123ABCD' })],
    ['Unfurl of a pasted payment link', invoiceUnfurl(open, NOW)],
    ['`/balance help`', balanceHelp()],
    ['`/invoice help`', invoiceHelp('in_channel')],
    ['`/invoice` with nothing after it', invoiceUsage()],
    ['Not an invoice id', invalidInvoiceMessage('order 1042')],
    [
      'Invoice not found',
      errorMessage(new InvoiceNotFoundError('aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee', { status: 400 })),
    ],
    ['Invalid API key', errorMessage(new InvalidApiKeyError({ status: 401 }))],
    ['Rate limited', errorMessage(new RateLimitedError(120_000, { status: 429 }))],
    ['Timeout', errorMessage(new PaymentTimeoutError(8000, {}))],
    ['Service unavailable', errorMessage(new ServiceUnavailableError('HTTP 503', { status: 503 }))],
    ['Unexpected answer', errorMessage(new UnexpectedResponseError({ detail: 'not JSON', status: 200 }))],
    [
      'Other service error',
      errorMessage(new ServiceError('ForbiddenError', 'project is disabled', { status: 403 })),
    ],
    [
      'Refresh failed',
      errorMessage(new ServiceUnavailableError('HTTP 503', { status: 503 }), 'Could not refresh the invoice'),
    ],
    ['`/balance` from another workspace', errorMessage(new AccessDeniedError('other_workspace'))],
    ['`/balance` by someone not allowed', errorMessage(new AccessDeniedError('user_not_allowed'))],
    [
      '`/balance` in a channel not allowed',
      errorMessage(new AccessDeniedError('channel_not_allowed', ['C0FINANCE'])),
    ],
  ];
  for (const [name, message] of samples) console.log(`- [${name}](${builderLink(message)})`);
} finally {
  await pool.close();
  await sandbox.close();
}
