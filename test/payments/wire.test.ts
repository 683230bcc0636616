import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BodyTooLargeError, describeNetworkError, readText } from '../../src/payments/wire.js';

/** The few words a network failure is logged and reported with ("payment service unavailable: …"). */
describe('a network failure in a few words', () => {
  it('is its code when it has one', () => {
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    expect(describeNetworkError(reset)).toBe('ECONNRESET');
  });

  it('is its message when it has no code, or a code that is not a name', () => {
    expect(describeNetworkError(new Error('other side closed'))).toBe('other side closed');
    expect(describeNetworkError(Object.assign(new Error('socket hang up'), { code: 104 }))).toBe(
      'socket hang up',
    );
  });

  it('is "network error" when what failed is not even an Error', () => {
    expect(describeNetworkError('ECONNRESET')).toBe('network error');
    expect(describeNetworkError(undefined)).toBe('network error');
  });
});

/** The body of an answer as read off the wire (src/payments/wire.ts readText). */
describe('reading a body up to its limit', () => {
  const stream = (...chunks: string[]) => {
    const body = new PassThrough();
    for (const chunk of chunks) body.write(chunk);
    return body;
  };

  it('is the whole text, however it was cut into chunks, a character split across two included', async () => {
    const euro = Buffer.from('€');
    const body = new PassThrough();
    const text = readText(body, 100);
    body.write('{"amount":"1.5 ');
    body.write(euro.subarray(0, 1));
    body.end(Buffer.concat([euro.subarray(1), Buffer.from('"}')]));
    expect(await text).toBe('{"amount":"1.5 €"}');
  });

  it('is the text at exactly the limit, and BodyTooLargeError one byte past it, the rest left unread', async () => {
    const exact = stream('12345');
    const read = readText(exact, 5);
    exact.end();
    expect(await read).toBe('12345');

    const over = stream('1234', '56');
    const refused = readText(over, 5);
    over.end('789');
    await expect(refused).rejects.toThrow(new BodyTooLargeError('the body is larger than 5 bytes'));
    expect(over.destroyed).toBe(true);
  });

  it("fails with the stream's own error when the connection fails mid-body", async () => {
    const body = stream('{"res');
    const read = readText(body, 100);
    const reset = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    body.destroy(reset);
    await expect(read).rejects.toBe(reset);
  });

  it('fails as a premature close when the body stops without an end or an error', async () => {
    const body = stream('{"res');
    const read = readText(body, 100);
    body.destroy();
    await expect(read).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
  });
});
