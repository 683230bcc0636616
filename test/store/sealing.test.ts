import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSealer, keyIdOf, parseEncryptionKey, SealingError } from '../../src/store/sealing.js';

const KEY_A = randomBytes(32);
const KEY_B = randomBytes(32);
const CONTEXT = 'installation:T0ACME:bot_token';
const TOKEN = 'xoxb-1111-2222-secret-bot-token';

describe('sealing secrets at rest', () => {
  it('opens what it sealed, and the sealed text holds neither the secret nor the key', () => {
    const sealer = createSealer({ current: KEY_A });
    const sealed = sealer.seal(TOKEN, CONTEXT);
    expect(sealer.open(sealed, CONTEXT)).toEqual({ plaintext: TOKEN, stale: false });
    expect(sealed).not.toContain(TOKEN);
    expect(sealed).not.toContain('secret');
    expect(sealed).not.toContain(KEY_A.toString('base64'));
    expect(sealed).toMatch(new RegExp(`^v1\\.${keyIdOf(KEY_A)}\\.`));
  });

  it('seals the same secret differently each time (a fresh IV)', () => {
    const sealer = createSealer({ current: KEY_A });
    expect(sealer.seal(TOKEN, CONTEXT)).not.toBe(sealer.seal(TOKEN, CONTEXT));
  });

  it('round-trips any text, in any context', () => {
    const sealer = createSealer({ current: KEY_A });
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string(), (secret, context) => {
        expect(sealer.open(sealer.seal(secret, context), context).plaintext).toBe(secret);
      }),
      { numRuns: 200 },
    );
  });

  it('does not open a value moved to another row (another merchant’s context)', () => {
    const sealer = createSealer({ current: KEY_A });
    const sealed = sealer.seal(TOKEN, CONTEXT);
    expect(() => sealer.open(sealed, 'installation:T0OTHER:bot_token')).toThrow(SealingError);
  });

  it('refuses an altered value: every character changed anywhere is caught', () => {
    const sealer = createSealer({ current: KEY_A });
    const sealed = sealer.seal(TOKEN, CONTEXT);
    fc.assert(
      fc.property(fc.nat(sealed.length - 1), fc.constantFrom('A', 'b', '0', '-', '_', '.'), (at, char) => {
        fc.pre(sealed[at] !== char);
        const altered = sealed.slice(0, at) + char + sealed.slice(at + 1);
        expect(() => sealer.open(altered, CONTEXT)).toThrow(SealingError);
      }),
      { numRuns: 300 },
    );
  });

  it('opens values sealed with the previous key after a rotation, and says they should be sealed again', () => {
    const before = createSealer({ current: KEY_A });
    const sealed = before.seal(TOKEN, CONTEXT);
    const after = createSealer({ current: KEY_B, previous: KEY_A });
    expect(after.open(sealed, CONTEXT)).toEqual({ plaintext: TOKEN, stale: true });
    const resealed = after.seal(TOKEN, CONTEXT);
    expect(after.open(resealed, CONTEXT)).toEqual({ plaintext: TOKEN, stale: false });
    expect(createSealer({ current: KEY_B }).open(resealed, CONTEXT).plaintext).toBe(TOKEN);
  });

  it('names the variables, and no secret, when no configured key opens a value', () => {
    const sealed = createSealer({ current: KEY_A }).seal(TOKEN, CONTEXT);
    const wrong = createSealer({ current: KEY_B });
    let error: unknown;
    try {
      wrong.open(sealed, CONTEXT);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SealingError);
    const message = (error as Error).message;
    expect(message).toContain('ENCRYPTION_KEY');
    expect(message).toContain('ENCRYPTION_KEY_PREVIOUS');
    expect(message).toContain(keyIdOf(KEY_A));
    expect(message).toContain(keyIdOf(KEY_B));
    expect(message).not.toContain(TOKEN);
    expect(message).not.toContain(KEY_A.toString('base64'));
    expect(message).not.toContain(KEY_B.toString('base64'));
  });

  it.each(['', 'plain-token', 'v1.abc', `v2.${keyIdOf(KEY_A)}.a.b.c`, `v1.${keyIdOf(KEY_A)}.a.b.c.d`])(
    'refuses %j, which is not a sealed value',
    (text) => {
      expect(() => createSealer({ current: KEY_A }).open(text, CONTEXT)).toThrow(SealingError);
    },
  );

  it('refuses a value whose IV or tag has the wrong length', () => {
    const sealer = createSealer({ current: KEY_A });
    const [v, id, iv, tag, ct] = sealer.seal(TOKEN, CONTEXT).split('.');
    expect(() => sealer.open([v, id, `${iv}AA`, tag, ct].join('.'), CONTEXT)).toThrow(/not a sealed value/);
    expect(() => sealer.open([v, id, iv, tag?.slice(4), ct].join('.'), CONTEXT)).toThrow(
      /not a sealed value/,
    );
  });

  it('gives each key its own short id, the same every time', () => {
    expect(keyIdOf(KEY_A)).toMatch(/^[0-9a-f]{8}$/);
    expect(keyIdOf(KEY_A)).toBe(keyIdOf(Buffer.from(KEY_A)));
    expect(keyIdOf(KEY_A)).not.toBe(keyIdOf(KEY_B));
    expect(createSealer({ current: KEY_A }).keyId).toBe(keyIdOf(KEY_A));
  });
});

describe('parseEncryptionKey', () => {
  it('reads 32 bytes given as base64 or base64url, padded or not, with spaces around', () => {
    const key = randomBytes(32);
    for (const text of [
      key.toString('base64'),
      key.toString('base64url'),
      ` ${key.toString('base64')}\n`,
      key.toString('base64').replace(/=+$/, ''),
    ])
      expect(parseEncryptionKey(text)).toEqual(key);
  });

  it.each([
    ['16 bytes', randomBytes(16).toString('base64')],
    ['33 bytes', randomBytes(33).toString('base64')],
    ['hex', randomBytes(32).toString('hex')],
    ['not base64', 'this is not a key at all!!'],
    ['empty', ''],
  ])('refuses %s', (_label, text) => {
    expect(parseEncryptionKey(text)).toBeUndefined();
  });
});
