/**
 * `npm run preview`: a Block Kit Builder link for each message the bot sends, built by the real
 * views from the sandbox's demo data fetched through the real client. Prints a Markdown list
 * (docs/previews.md, "What it looks like", is this output: test/docs.test.ts compares them).
 */
import { Pool } from 'undici';
import { AccessDeniedError } from '../src/access.js';
import { balanceChanges, toStored } from '../src/feed/deltas.js';
import {
  Amount,
  createPaymentsClient,
  InvalidApiKeyError,
  InvoiceNotFoundError,
  PaymentTimeoutError,
  parseInvoiceId,
  RateLimitedError,
  ServiceError,
  ServiceUnavailableError,
  UnexpectedResponseError,
} from '../src/payments/index.js';
import { DEMO_INVOICE_IDS, demoInvoices } from '../src/sandbox/data.js';
import { startSandbox } from '../src/sandbox/server.js';
import { balanceMessage } from '../src/views/balance.js';
import { errorMessage, invalidInvoiceMessage } from '../src/views/errors.js';
import { digestMessage, feedMessage, subscribedMessage } from '../src/views/feed.js';
import { balanceHelp, invoiceHelp, invoiceUsage } from '../src/views/help.js';
import { homeView } from '../src/views/home.js';
import { invoiceMessage, invoiceUnfurl, liveInvoiceCard } from '../src/views/invoice.js';
import { paymentCheckMessage } from '../src/views/shortcut.js';
import { endReasonText, transitionMessage, watchEndedMessage, watchListMessage } from '../src/views/watch.js';
import { changes, toSnapshot } from '../src/watches/snapshot.js';

/** A fixed clock, so the links in docs/previews.md do not change from run to run. */
const NOW = new Date('2026-11-21T12:00:00.000Z');
const PAY_URL = 'https://pay.example.com';
const MISSING = parseInvoiceId('aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee') ?? DEMO_INVOICE_IDS.open;

/** A Block Kit Builder link; a home view opens on the App Home surface. */
const builderLink = (message: { blocks: unknown[]; type?: string }) =>
  `https://app.slack.com/block-kit-builder/#${encodeURIComponent(
    JSON.stringify(
      message.type === 'home' ? { type: 'home', blocks: message.blocks } : { blocks: message.blocks },
    ),
  )}`;

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
  const paidOpen = { ...open, status: 'closed', payStatus: 'paid' };
  const watch = { id: 'w-1', watcherId: 'U0123ABCD', startedAt: new Date(NOW.getTime() - 3_600_000) };
  /** A watch as the lists show it (`/invoice watching`, the App Home). */
  const demoWatch = {
    id: 'w-1',
    invoiceId: open.id,
    title: open.title,
    status: 'open',
    payStatus: 'none',
    watcherId: 'U0123ABCD',
    startedAt: NOW,
  };
  const ended = {
    at: NOW,
    reason: endReasonText('stopped', { by: 'U0123ABCD', graceMinutes: 60, maxDays: 7 }),
  };
  const laterBalance = balance.map((e) =>
    e.id === 'BTC'
      ? { ...e, balance: Amount.parse('0.0165456') ?? e.balance }
      : e.id === 'DOGE'
        ? { ...e, balance: Amount.parse('4000') ?? e.balance }
        : e,
  );

  const samples: [string, { blocks: unknown[] }][] = [
    ['`/balance`', balanceMessage(balance, NOW)],
    ['`/balance` with no currencies', balanceMessage([], NOW)],
    ['`/invoice` (open)', invoiceMessage(open, { now: NOW })],
    [
      '`/invoice` (paid: values the document has not seen read as words, exactly as sent in the context line)',
      invoiceMessage(paid, { now: NOW }),
    ],
    [
      '`/invoice` (a state never seen: `partially_refunded` reads "Partially refunded")',
      invoiceMessage({ ...paid, payStatus: 'partially_refunded' }, { now: NOW }),
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
    ['Live card of a watched invoice', liveInvoiceCard(open, { now: NOW, watch })],
    [
      'Thread reply when the customer pays',
      transitionMessage(paidOpen, changes(toSnapshot(open), toSnapshot(paidOpen)), 'U0123ABCD', NOW),
    ],
    ['Live card once the watch ended', liveInvoiceCard(paidOpen, { now: NOW, watch: { ...watch, ended } })],
    ['Thread reply when a watch ends', watchEndedMessage(paidOpen, ended.reason, 'U0123ABCD')],
    ['`/invoice watching`', watchListMessage('C0SUPPORT', [demoWatch])],
    [
      '`/balance subscribe` (posted in the channel)',
      subscribedMessage({
        channelId: 'G0FINANCE',
        userId: 'U0123ABCD',
        digest: '09:00 Europe/Berlin',
        balances: toStored(balance),
        readAt: NOW,
        pollSeconds: 60,
      }),
    ],
    ['Payments feed', feedMessage(balanceChanges(toStored(balance), toStored(laterBalance)), NOW)],
    [
      'Daily digest',
      digestMessage({
        balances: toStored(laterBalance),
        asOf: NOW,
        before: toStored(balance),
        beforeAt: new Date(NOW.getTime() - 86_400_000),
        rises: 3,
        falls: 1,
      }),
    ],
    [
      'Check payment status (message shortcut)',
      paymentCheckMessage(
        [
          { id: DEMO_INVOICE_IDS.open, invoice: open },
          { id: DEMO_INVOICE_IDS.paid, invoice: paid },
          {
            id: MISSING,
            error: new InvoiceNotFoundError(MISSING, { status: 400 }),
          },
        ],
        0,
        { now: NOW, threadTs: '1795262400.000100' },
      ),
    ],
    [
      'App Home',
      homeView({
        balance: { kind: 'shown', entries: balance, readAt: NOW },
        watches: [{ ...demoWatch, channelId: 'C0SUPPORT' }],
        feeds: [
          { channelId: 'G0FINANCE', subscriberId: 'U0123ABCD', digest: '09:00 Europe/Berlin', since: NOW },
        ],
        health: {
          lastSuccess: { at: NOW, operation: 'balance' },
          lastProblem: undefined,
          keyRejectedSince: undefined,
          keySource: 'configuration',
          breaker: 'closed',
        },
        outbox: { pending: 0, oldestAt: undefined },
        now: NOW,
      }),
    ],
  ];
  for (const [name, message] of samples) console.log(`- [${name}](${builderLink(message)})`);
} finally {
  await pool.close();
  await sandbox.close();
}
