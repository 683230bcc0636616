import { inspect } from 'node:util';
import { stringify } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import type { UnexpectedResponseError } from '../../src/payments/index.js';
import { DEMO_INVOICE_IDS, demoInvoices } from '../../src/sandbox/data.js';
import { failure, useFastRetryService } from './client-setup.js';

/** The payments client never lets the API key out: not in errors, logs or answers. */

const service = useFastRetryService();

describe('the API key never leaks', () => {
  const key = 'sk-live-Zq8Xv2LmN4pR7tY1';
  const echo = (status: number) =>
    JSON.stringify({ status, name: `Err ${key}`, message: `bad key ${key}`, details: { key } });

  it.each<[string, () => void]>([
    ['401', () => service.sandbox.failNext({ kind: 'status', status: 401, body: echo(401) })],
    ['403 echoing the key', () => service.sandbox.failNext({ kind: 'status', status: 403, body: echo(403) })],
    ['503', () => service.sandbox.failNext({ kind: 'status', status: 503, body: echo(503) }, 3)],
    ['429', () => service.sandbox.failNext({ kind: 'status', status: 429, body: echo(429) }, 3)],
    [
      'a broken body echoing the key',
      () => service.sandbox.failNext({ kind: 'status', status: 200, body: `<${key}>` }),
    ],
    [
      'a schema failure echoing the key',
      () => service.sandbox.failNext({ kind: 'status', status: 200, body: `{"result":"${key}"}` }),
    ],
    ['a reset', () => service.sandbox.failNext({ kind: 'reset' }, 3)],
    ['a timeout', () => service.sandbox.failNext({ kind: 'hang' })],
  ])('not in the error, its fields or its cause chain after %s', async (_label, arrange) => {
    arrange();
    const error = await failure(service.client({ apiKey: key, timeoutMs: 300 }).getBalance());
    const everything = [
      error.message,
      String(error),
      inspect(error, { depth: Number.POSITIVE_INFINITY, showHidden: true }),
      JSON.stringify(error),
    ].join('\n');
    expect(everything).not.toContain(key);
  });
});

describe('the API key in answers', () => {
  const key = 'sk-live-"quoted"\\back-Zq8Xv2LmN4pR7tY1';

  it('is redacted before the snippet is cut, so no part of it is kept', async () => {
    const body = `${'x'.repeat(180)} Token ${key}`;
    service.sandbox.failNext({ kind: 'status', status: 200, body });
    const error = (await failure(service.client({ apiKey: key }).getBalance())) as UnexpectedResponseError;
    expect(error.bodySnippet).toBe(`${'x'.repeat(180)} Token [REDACTED]`.slice(0, 200));
    expect(error.bodySnippet).not.toContain('sk-live');
  });

  it('is redacted in its JSON-escaped spelling too', async () => {
    const body = JSON.stringify({ result: `echo ${key}` });
    expect(body).not.toContain(key); // the body holds the escaped spelling only
    service.sandbox.failNext({ kind: 'status', status: 200, body });
    const error = (await failure(service.client({ apiKey: key }).getBalance())) as UnexpectedResponseError;
    expect(error.bodySnippet).toBe('{"result":"echo [REDACTED]"}');
  });

  it('is removed from every string of a successful answer before anything shows it', async () => {
    const wire = {
      ...demoInvoices(service.sandbox.payUrl)[0],
      title: `Order for ${key}`,
      shop: { title: key, failUrl: null, successUrl: null },
    };
    service.sandbox.failNext({ kind: 'status', status: 200, body: stringify(wire) ?? '' });
    const invoice = await service.client({ apiKey: key }).getInvoice(DEMO_INVOICE_IDS.open);
    expect(invoice.title).toBe('Order for [REDACTED]');
    expect(invoice.shop.title).toBe('[REDACTED]');
    expect(invoice.amount.toString()).toBe('149.99');
  });
});
