import { LogLevel } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { boltLogger } from '../src/logger.js';
import { captureLogs } from './support/bolt.js';

describe('logger', () => {
  it('writes one JSON line per entry with level, time and fields', () => {
    const logs = captureLogs();
    logs.logger.info({ user: 'U1' }, 'hello');
    expect(logs.lines).toEqual([
      expect.objectContaining({ level: 'info', msg: 'hello', user: 'U1', time: expect.any(String) }),
    ]);
  });

  it('redacts configured secrets and any Slack token wherever they appear, errors included', () => {
    const secret = 'pay-key-"quoted"-123';
    const logs = captureLogs([secret]);
    logs.logger.error(
      { err: new Error(`failed with ${secret}`), header: `Token ${secret}` },
      `key=${secret}`,
    );
    logs.logger.warn(
      'tokens xoxb-123-456-abc and xapp-1-A1-xyz and xoxp-9-9, refresh xoxe-1-My4x and xoxe.xoxp-1-Mi0y, step xwfp-7-q',
    );
    const written = logs.raw.join('');
    expect(written).not.toContain('pay-key');
    expect(written).not.toMatch(/xox[bpe]|xapp-|xwfp-|Mi0y|My4x/);
    expect(logs.lines.at(-1)?.msg).toBe(
      'tokens [REDACTED] and [REDACTED] and [REDACTED], refresh [REDACTED] and [REDACTED], step [REDACTED]',
    );
    expect(logs.lines[0]).toMatchObject({ service: 'payments-slack-bot' });
    expect(written).toContain('[REDACTED]');
  });

  it('carries Bolt’s variadic log calls, errors included, through the same redaction', () => {
    const logs = captureLogs(['s3cret-signing']);
    const bolt = boltLogger(logs.logger);
    bolt.warn('verification failed', { secret: 's3cret-signing' }, new Error('boom'));
    const [line] = logs.lines;
    expect(line).toMatchObject({ component: 'slack', level: 'warn' });
    expect(String(line?.msg)).toContain('verification failed');
    expect(line?.err).toMatchObject({ message: 'boom' });
    expect(logs.raw.join('')).not.toContain('s3cret-signing');
  });

  it('writes each of Bolt’s levels at the same level, with objects spelled out and errors by message', () => {
    const logs = captureLogs();
    const bolt = boltLogger(logs.logger, 'socket');
    bolt.debug('d', { nested: { deep: [1, 2] } });
    bolt.info('i');
    bolt.warn('w');
    bolt.error(new Error('went wrong'));
    expect(logs.lines.map((l) => [l.level, l.component, l.msg])).toEqual([
      ['debug', 'socket', 'd { nested: { deep: [ 1, 2 ] } }'],
      ['info', 'socket', 'i'],
      ['warn', 'socket', 'w'],
      ['error', 'socket', 'went wrong'],
    ]);
    expect(logs.lines[1]).not.toHaveProperty('err');
  });

  it.each([
    [LogLevel.DEBUG, LogLevel.DEBUG],
    [LogLevel.INFO, LogLevel.INFO],
    [LogLevel.WARN, LogLevel.WARN],
    [LogLevel.ERROR, LogLevel.ERROR],
  ])('lets Bolt set its level (%s) and reads it back', (level, expected) => {
    const logs = captureLogs();
    const bolt = boltLogger(logs.logger);
    bolt.setLevel(level);
    expect(bolt.getLevel()).toBe(expected);
    bolt.debug('only at debug');
    expect(logs.lines).toHaveLength(level === LogLevel.DEBUG ? 1 : 0);
  });

  it('reads pino’s trace and fatal as Bolt’s debug and error', () => {
    const logs = captureLogs();
    logs.logger.level = 'trace';
    expect(boltLogger(logs.logger).getLevel()).toBe(LogLevel.DEBUG);
    logs.logger.level = 'fatal';
    expect(boltLogger(logs.logger).getLevel()).toBe(LogLevel.ERROR);
  });
});
