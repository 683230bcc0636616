import { inspect } from 'node:util';
import { type Logger as BoltLogger, LogLevel } from '@slack/bolt';
import pino from 'pino';
import type { LogLevel as ConfigLogLevel } from './config.js';
import { createRedactor, REDACTED } from './redact.js';

export type Logger = pino.Logger;

/** Any Slack token, ours or not (bot, user, app-level, workflow step, config, refresh). */
const SLACK_TOKEN = /\b(?:xox[a-z]|xapp|xwfp|xoxe(?:\.xox[a-z])?)-[A-Za-z0-9-]+/g;

interface LoggerOptions {
  level: ConfigLogLevel;
  /** Values that must never be written, whatever logs them. */
  secrets: readonly string[];
  destination?: pino.DestinationStream;
}

/**
 * pino's error serializer, with the error's own message: pino's would append every cause's
 * message to it, and ours already quote their cause's words ("could not open the PostgreSQL …:
 * connect ECONNREFUSED …"), which then read twice. Each cause is still in the stack, once, after
 * "caused by:".
 */
function errorWithOwnMessage(error: unknown) {
  const serialized = pino.stdSerializers.err(error as Error);
  return error instanceof Error ? { ...serialized, message: error.message } : serialized;
}

/**
 * Structured JSON logs (pino). Redaction is the last step before a line is written, so a secret
 * cannot leak through any path, including a library's log line or an error's stack.
 */
export function createLogger({ level, secrets, destination }: LoggerOptions): Logger {
  // Every spelling: a secret may be written JSON-escaped once or twice inside a log line.
  const redact = createRedactor(secrets);
  return pino(
    {
      level,
      base: { service: 'payments-slack-bot' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: errorWithOwnMessage },
      hooks: { streamWrite: (line) => redact(line).replace(SLACK_TOKEN, REDACTED) },
    },
    // Synchronous: an asynchronous destination was tried and, at exit, could write the last
    // lines out of order ("stopped" before "stopping"). Its benefit was within the benchmark's
    // noise on this machine; ordered, complete logs at shutdown are worth more.
    destination ?? pino.destination({ sync: true }),
  );
}

const toBoltLevel = (level: string): LogLevel =>
  level === 'trace' || level === 'debug'
    ? LogLevel.DEBUG
    : level === 'info'
      ? LogLevel.INFO
      : level === 'warn'
        ? LogLevel.WARN
        : LogLevel.ERROR;

/** Bolt's and the Slack SDK's logs, written through our logger as JSON with `component`. */
export function boltLogger(parent: Logger, component = 'slack'): BoltLogger {
  const child = parent.child({ component });
  const write =
    (method: 'debug' | 'info' | 'warn' | 'error') =>
    (...parts: unknown[]) => {
      const err = parts.find((p): p is Error => p instanceof Error);
      const msg = parts
        .map((p) =>
          typeof p === 'string'
            ? p
            : p instanceof Error
              ? p.message
              : inspect(p, { depth: 4, breakLength: Number.POSITIVE_INFINITY }),
        )
        .join(' ');
      child[method](err ? { err } : {}, msg);
    };
  return {
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
    setLevel: (level) => {
      child.level = level;
    },
    getLevel: () => toBoltLevel(child.level),
    setName: () => {},
  };
}
