import { describe, expect, it } from 'vitest';
import { createRedactor, REDACTED } from '../src/redact.js';

describe('createRedactor', () => {
  it.each([[['secret-1', 'secret-1-longer']], [['secret-1-longer', 'secret-1']]])(
    'redacts a secret that contains another one whole, whatever order they are given in (%j)',
    (secrets) => {
      const redact = createRedactor(secrets);
      expect(redact('a secret-1-longer b secret-1 c')).toBe(`a ${REDACTED} b ${REDACTED} c`);
    },
  );

  it('leaves text alone when there is nothing to hide', () => {
    expect(createRedactor([undefined, ''])('secret-1')).toBe('secret-1');
  });
});
