import { describe, expect, it } from 'vitest';
import { UnexpectedResponseError } from '../../src/payments/index.js';
import { useSandboxClient } from '../support/sandbox-client.js';

/** What an operator reads in the log of an answer that is not what the API document says. */

const service = useSandboxClient();

/** The balance call's rejection, which must be an UnexpectedResponseError. */
async function unexpected(call: Promise<unknown>): Promise<UnexpectedResponseError> {
  const error = await call.then(
    () => new Error('expected the call to fail'),
    (e: unknown) => e,
  );
  if (!(error instanceof UnexpectedResponseError)) throw error;
  return error;
}

const answer = (body: unknown) =>
  service.sandbox.failNext({ kind: 'status', status: 200, body: JSON.stringify(body) });

describe('an answer that is not a balance', () => {
  it('says the body does not match the document, and where', async () => {
    answer({ status: 'success', result: [{ id: 'BTC', title: 'Bitcoin', balance: 'lots' }] });
    const error = await unexpected(service.client().getBalance());
    expect(error.message).toBe(
      'unexpected answer from the payment service: the body does not match the API document',
    );
    expect(error.issues).toEqual(['result.0.balance: not a decimal number']);
  });

  it('lists ten of the places a long answer broke the document at most', async () => {
    const result = Array.from({ length: 12 }, (_, n) => ({
      id: `C${n}`,
      title: `Coin ${n}`,
      balance: 'lots',
    }));
    answer({ status: 'success', result });
    const error = await unexpected(service.client().getBalance());
    expect(error.issues).toEqual(
      Array.from({ length: 10 }, (_, n) => `result.${n}.balance: not a decimal number`),
    );
  });

  it('lists no place for a body that is not JSON', async () => {
    service.sandbox.failNext({ kind: 'html' });
    const error = await unexpected(service.client().getBalance());
    expect(error.message).toBe('unexpected answer from the payment service: the body is not JSON');
    expect(error.issues).toEqual([]);
  });

  it('lists no place for an error in a 200: it is the status that is wrong', async () => {
    answer({ status: 'error', message: 'maintenance', result: [] });
    const error = await unexpected(service.client().getBalance());
    expect(error.message).toBe(
      'unexpected answer from the payment service: the status is "error", not "success": maintenance',
    );
    expect(error.issues).toEqual([]);
  });
});

describe('the size of a body', () => {
  const body = JSON.stringify({
    status: 'success',
    result: [{ id: 'BTC', title: 'Bitcoin', balance: '1.5' }],
  });
  const bytes = Buffer.byteLength(body);

  it('reads a body of exactly the limit', async () => {
    service.sandbox.failNext({ kind: 'status', status: 200, body });
    const balance = await service.client({ maxBodyBytes: bytes }).getBalance();
    expect(balance.map((b) => `${b.id} ${b.balance}`)).toEqual(['BTC 1.5']);
  });

  it('refuses a body one byte over the limit', async () => {
    service.sandbox.failNext({ kind: 'status', status: 200, body });
    const error = await unexpected(service.client({ maxBodyBytes: bytes - 1 }).getBalance());
    expect(error.message).toBe(
      `unexpected answer from the payment service: the body is larger than ${bytes - 1} bytes`,
    );
  });
});
