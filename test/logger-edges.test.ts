import { describe, expect, it } from 'vitest';
import { boltLogger } from '../src/logger.js';
import { captureLogs } from './support/bolt.js';

describe('Bolt’s log calls', () => {
  it('spell out an object four levels deep', () => {
    const logs = captureLogs();
    boltLogger(logs.logger).warn('socket', { a: { b: { c: { d: { e: 'deepest' } } } } });
    expect(logs.lines).toHaveLength(1);
    expect(logs.lines[0]?.msg).toMatch(/^socket \{/);
    expect(logs.lines[0]?.msg).toContain("d: { e: 'deepest' }");
  });

  it('stop past four levels', () => {
    const logs = captureLogs();
    boltLogger(logs.logger).info({ a: { b: { c: { d: { e: { f: 1 } } } } } });
    expect(logs.lines[0]?.msg).toContain('e: [Object]');
    expect(logs.lines[0]?.msg).not.toContain('f:');
  });

  it('keep a wide object of a few short fields on one line', () => {
    const logs = captureLogs();
    const [a, b] = ['x'.repeat(50), 'y'.repeat(50)];
    boltLogger(logs.logger).info('wide', { a, b });
    expect(logs.lines[0]?.msg).toBe(`wide { a: '${a}', b: '${b}' }`);
  });
});

describe('an error with a cause', () => {
  it('is written with its own message, its cause’s words once, and every cause in the stack', () => {
    const logs = captureLogs();
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    const error = new Error(`could not open the PostgreSQL at 127.0.0.1:1/db: ${refused.message}`, {
      cause: refused,
    });
    logs.logger.fatal({ err: error }, 'could not start');
    const err = logs.lines[0]?.err as { message: string; stack: string };
    expect(err.message).toBe(
      'could not open the PostgreSQL at 127.0.0.1:1/db: connect ECONNREFUSED 127.0.0.1:1',
    );
    expect(err.stack).toContain('caused by: Error: connect ECONNREFUSED 127.0.0.1:1');
  });
});
