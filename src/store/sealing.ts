import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (bot tokens, refresh tokens, payment API keys): sealed with AES-256-GCM from
 * `node:crypto` before they reach the database, opened only on the way out. A sealed value reads
 * `v1.<key id>.<iv>.<tag>.<ciphertext>` (base64url): the key id says which key sealed it, so
 * `ENCRYPTION_KEY_PREVIOUS` still opens what the other key sealed during a rotation, and the start
 * can tell which keys the stored secrets need without opening one (src/store/rotation.ts).
 *
 * Each value is bound to where it belongs (`context`, e.g. `installation:T0123:bot_token`) as
 * additional authenticated data: a ciphertext copied into another merchant's row does not open.
 */

const VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The head of a sealed value, up to its key id (8 hex digits, as `keyIdOf` makes them). */
const SEALED_HEAD = new RegExp(`^${VERSION}\\.([0-9a-f]{8})\\.`);

export interface SealingKeys {
  /** Seals every new value. */
  current: Buffer;
  /** Still opens values sealed before a rotation. */
  previous?: Buffer | undefined;
}

export interface Opened {
  plaintext: string;
  /** Sealed with the previous key: seal it again with the current one. */
  stale: boolean;
}

export interface Sealer {
  /** The id of ENCRYPTION_KEY, which seals. */
  readonly keyId: string;
  /** The id of ENCRYPTION_KEY_PREVIOUS, which only opens; undefined when it is not set. */
  readonly previousKeyId: string | undefined;
  seal(plaintext: string, context: string): string;
  open(sealed: string, context: string): Opened;
}

/** A sealed value that no configured key opens, or that was altered. Never holds the value. */
export class SealingError extends Error {
  override readonly name = 'SealingError';
}

/** `ENCRYPTION_KEY` as given (base64 or base64url of 32 random bytes) → the key; `undefined` when it is not one. */
export function parseEncryptionKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) return undefined;
  // Node's base64 decoder takes the URL-safe alphabet too.
  const key = Buffer.from(trimmed, 'base64');
  return key.length === KEY_BYTES ? key : undefined;
}

/** A short, stable name for a key that tells nothing about it: 8 hex digits of its SHA-256. */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256')
    .update('payments-slack-bot sealing key id')
    .update(key)
    .digest('hex')
    .slice(0, 8);
}

/**
 * The id of the key that sealed `sealed`, read from its head (`v1.<key id>.`, which is all it
 * needs): undefined when it does not read as a sealed value. Opens nothing.
 */
export function sealedKeyId(sealed: string): string | undefined {
  return SEALED_HEAD.exec(sealed)?.[1];
}

/**
 * Which sealing of a value `sealed` is: its random IV (`v1.<key id>.<iv>.…`), nothing secret.
 * Every seal draws a new one: a new value, or the same one sealed again, has another.
 */
export function sealingOf(sealed: string): string | undefined {
  return sealed.split('.', 3)[2];
}

/**
 * base64url as `seal` writes it, and only that: the last character's spare bits could otherwise
 * be changed without changing the bytes, and an altered value must never open.
 */
function canonical(part: string): Buffer | undefined {
  const bytes = Buffer.from(part, 'base64url');
  return bytes.toString('base64url') === part ? bytes : undefined;
}

export function createSealer(keys: SealingKeys): Sealer {
  const current = { id: keyIdOf(keys.current), key: keys.current };
  const previousKeyId = keys.previous ? keyIdOf(keys.previous) : undefined;
  const byId = new Map([[current.id, current.key]]);
  if (keys.previous) byId.set(keyIdOf(keys.previous), keys.previous);

  return {
    keyId: current.id,
    previousKeyId,

    seal(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current.key, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const parts = [iv, cipher.getAuthTag(), ciphertext].map((b) => b.toString('base64url'));
      return [VERSION, current.id, ...parts].join('.');
    },

    open(sealed, context) {
      const [version, keyId, iv, tag, ciphertext, ...rest] = sealed.split('.');
      if (version !== VERSION || !keyId || !iv || !tag || ciphertext === undefined || rest.length > 0)
        throw new SealingError(`a stored secret for ${context} is not a sealed value`);
      const key = byId.get(keyId);
      if (!key) {
        throw new SealingError(
          `a stored secret for ${context} was sealed with key ${keyId}, which is neither ENCRYPTION_KEY (${current.id}) nor ENCRYPTION_KEY_PREVIOUS`,
        );
      }
      const [ivBytes, tagBytes, ciphertextBytes] = [iv, tag, ciphertext].map(canonical);
      if (tagBytes?.length !== TAG_BYTES || ivBytes?.length !== IV_BYTES || !ciphertextBytes)
        throw new SealingError(`a stored secret for ${context} is not a sealed value`);
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, ivBytes);
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(tagBytes);
        const plaintext = Buffer.concat([decipher.update(ciphertextBytes), decipher.final()]).toString(
          'utf8',
        );
        return { plaintext, stale: keyId !== current.id };
      } catch (error) {
        throw new SealingError(`a stored secret for ${context} was altered or belongs elsewhere`, {
          cause: error,
        });
      }
    },
  };
}
