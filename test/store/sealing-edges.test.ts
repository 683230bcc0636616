import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSealer, keyIdOf, parseEncryptionKey, SealingError } from '../../src/store/sealing.js';

const CONTEXT = 'installation:T0EDGE:bot_token';
const TOKEN = 'xoxb-edge-secret-token';
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** The error `work` throws (fails the test when it throws none). */
function thrown(work: () => unknown): Error {
  try {
    work();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error');
}

/** A sealed value's parts: version, key id, iv, tag, ciphertext. */
function partsOf(sealed: string): [string, string, string, string, string] {
  const parts = sealed.split('.');
  expect(parts).toHaveLength(5);
  return parts as [string, string, string, string, string];
}

/** The same bytes in base64url, written differently: the last character's spare low bit flipped. */
function spareBitFlipped(part: string): string {
  const last = part.at(-1) as string;
  const flipped = ALPHABET[ALPHABET.indexOf(last) ^ 1] as string;
  const altered = part.slice(0, -1) + flipped;
  // The trick only works for parts with spare bits: the bytes read are the same.
  expect(Buffer.from(altered, 'base64url')).toEqual(Buffer.from(part, 'base64url'));
  expect(altered).not.toBe(part);
  return altered;
}

describe('what a sealed value must look like to open', () => {
  it('names its errors SealingError and keeps what the cipher said as their cause', () => {
    const sealer = createSealer({ current: randomBytes(32) });
    const sealed = sealer.seal(TOKEN, CONTEXT);
    const error = thrown(() => sealer.open(sealed, 'installation:T0ELSE:bot_token'));
    expect(error).toBeInstanceOf(SealingError);
    expect(error.name).toBe('SealingError');
    expect(error.message).toBe(
      'a stored secret for installation:T0ELSE:bot_token was altered or belongs elsewhere',
    );
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('refuses another version of the format, even with every other part intact', () => {
    const sealer = createSealer({ current: randomBytes(32) });
    const [, id, iv, tag, ct] = partsOf(sealer.seal(TOKEN, CONTEXT));
    const error = thrown(() => sealer.open(['v2', id, iv, tag, ct].join('.'), CONTEXT));
    expect(error).toBeInstanceOf(SealingError);
    expect(error.message).toBe(`a stored secret for ${CONTEXT} is not a sealed value`);
  });

  it('refuses a value with a part missing or one too many, saying it is not a sealed value', () => {
    const sealer = createSealer({ current: randomBytes(32) });
    const [v, id, iv, tag, ct] = partsOf(sealer.seal(TOKEN, CONTEXT));
    for (const text of [
      [v, id, iv, tag].join('.'),
      [v, id, iv, tag, ct, ct].join('.'),
      [v, '', iv, tag, ct].join('.'),
      [v, id, '', tag, ct].join('.'),
      [v, id, iv, '', ct].join('.'),
    ]) {
      const error = thrown(() => sealer.open(text, CONTEXT));
      expect(error).toBeInstanceOf(SealingError);
      expect(error.message).toBe(`a stored secret for ${CONTEXT} is not a sealed value`);
    }
  });

  it('refuses the tag or the ciphertext written differently for the same bytes: no altered value opens', () => {
    const sealer = createSealer({ current: randomBytes(32) });
    // 16 bytes of tag leave spare bits in its last character; a 22-character secret does in the ciphertext.
    const [v, id, iv, tag, ct] = partsOf(sealer.seal(`${TOKEN}x`, CONTEXT));
    expect(sealer.open([v, id, iv, tag, ct].join('.'), CONTEXT).plaintext).toBe(`${TOKEN}x`);
    for (const text of [
      [v, id, iv, spareBitFlipped(tag), ct].join('.'),
      [v, id, iv, tag, spareBitFlipped(ct)].join('.'),
    ])
      expect(() => sealer.open(text, CONTEXT)).toThrow(SealingError);
  });

  it('refuses a padded IV as a SealingError, not as a crash', () => {
    const sealer = createSealer({ current: randomBytes(32) });
    const [v, id, iv, tag, ct] = partsOf(sealer.seal(TOKEN, CONTEXT));
    for (const text of [[v, id, `${iv}=`, tag, ct].join('.'), [v, id, iv, `${tag}==`, ct].join('.')]) {
      const error = thrown(() => sealer.open(text, CONTEXT));
      expect(error).toBeInstanceOf(SealingError);
      expect(error.message).toBe(`a stored secret for ${CONTEXT} is not a sealed value`);
    }
  });
});

describe('key ids', () => {
  it('are the same in every version of the bot: a stored value keeps naming its key', () => {
    // Changing how ids are made would make every stored secret name a key no start is given.
    expect(keyIdOf(Buffer.alloc(32, 0))).toBe('0a03cf48');
    expect(keyIdOf(Buffer.alloc(32, 7))).toBe('01c81d76');
  });
});

describe('parseEncryptionKey edges', () => {
  it('refuses a key with anything but base64 before or after it', () => {
    const key = randomBytes(32);
    const text = key.toString('base64url');
    expect(parseEncryptionKey(text)).toEqual(key);
    expect(parseEncryptionKey(`!${text}`)).toBeUndefined();
    expect(parseEncryptionKey(`${text}!`)).toBeUndefined();
    expect(parseEncryptionKey(`${text}===`)).toBeUndefined();
    expect(parseEncryptionKey(`${text.slice(0, 20)}.${text.slice(20)}`)).toBeUndefined();
  });
});
