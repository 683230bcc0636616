import { z } from 'zod';
import type { DatabaseLocation } from '../store/location.js';
import { parseEncryptionKey } from '../store/sealing.js';

/**
 * What a setting's value may be, as zod schemas of the text the environment holds. Every message
 * is our own and names what was wanted, never the value: several settings are secrets.
 */

/** The values `.env.example` ships with: a copy left unedited is refused by name. */
export const PLACEHOLDERS: Readonly<Record<string, string>> = {
  SLACK_BOT_TOKEN: 'xoxb-...',
  SLACK_APP_TOKEN: 'xapp-...',
  PAYMENT_API_URL: 'https://api.your-payment-service.example',
  PAYMENT_PAY_URL: 'https://pay.your-payment-service.example',
};

/** Secrets shorter than this are refused: a one-character key would redact every log line to shreds. */
const MIN_SECRET_LENGTH = 8;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** A string, trimmed, that is not the .env.example placeholder for `name`. */
export const text = (name: string) =>
  z
    .string('is required')
    .trim()
    .refine((v) => v !== PLACEHOLDERS[name], {
      message: 'is still the placeholder from .env.example',
      abort: true,
    });

export const secret = (name: string) =>
  text(name).refine((v) => v.length >= MIN_SECRET_LENGTH, {
    message: `must be at least ${MIN_SECRET_LENGTH} characters`,
    abort: true,
  });

export const token = (name: string, prefix: string, what: string) =>
  secret(name).refine((v) => v.startsWith(prefix), `must be ${what} (${prefix}…)`);

export const httpUrl = (name: string, what: string) =>
  text(name).refine(
    (v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol),
    `must be an http(s) URL (${what})`,
  );

/** A whole number written in digits only: `1e3`, `0x50` and `80.0` are refused. */
export const whole = (min: number, max: number, what: string) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, { message: `must be ${what} (digits only)`, abort: true })
    .transform(Number)
    .refine((n) => n >= min && n <= max, `must be ${what} from ${min} to ${max}`);

export const idList = (pattern: RegExp, what: string) =>
  z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((id) => id.trim())
        .filter(Boolean),
    )
    .refine((ids) => ids.length > 0, {
      message: 'holds no id: leave it unset to allow all',
      abort: true,
    })
    .refine((ids) => ids.every((id) => pattern.test(id)), `must be comma-separated ${what}`);

export const hostName = z
  .string()
  .trim()
  .regex(/^[^\s/]+$/, 'must be a host name or an IP address');

/** `postgres://…` (a password, when given, long enough to redact), or `file:<path>` for SQLite. */
export const databaseUrl = z
  .string()
  .trim()
  .transform((v, ctx): DatabaseLocation => {
    if (/^postgres(ql)?:\/\//.test(v) && URL.canParse(v)) {
      const { password } = new URL(v);
      if (!password || decodeURIComponent(password).length >= MIN_SECRET_LENGTH)
        return { kind: 'postgres', url: v };
      ctx.issues.push({
        code: 'custom',
        message: `has a password shorter than ${MIN_SECRET_LENGTH} characters`,
        input: undefined,
      });
      return z.NEVER;
    }
    const path = /^file:(.+)$/.exec(v)?.[1];
    if (path) return { kind: 'sqlite', path };
    ctx.issues.push({
      code: 'custom',
      message: 'must be postgres://…, postgresql://… or file:<path>',
      input: undefined,
    });
    return z.NEVER;
  });

/** The password in a database URL, as written and decoded, if it has one: the secrets of DATABASE_URL. */
export function databasePassword(location: DatabaseLocation): string[] {
  if (location.kind !== 'postgres') return [];
  const { password } = new URL(location.url);
  return password ? [password, decodeURIComponent(password)] : [];
}

export const encryptionKey = z.string('is required').transform((v, ctx) => {
  const key = parseEncryptionKey(v);
  if (key) return key;
  ctx.issues.push({
    code: 'custom',
    message: 'must be 32 random bytes in base64 (README shows how to make one)',
    input: undefined,
  });
  return z.NEVER;
});

/** A key's secrets: both spellings a log line could hold it in. */
export const keySpellings = (key: Buffer) => [key.toString('base64'), key.toString('base64url')];
