import { describe, expect, it } from 'vitest';
import { context, LIMITS, section } from '../../src/views/blocks.js';
import { md } from '../../src/views/mrkdwn.js';

describe('blocks', () => {
  it('never sends an empty text: a blank one reads as a dash', () => {
    expect(section(md`   `).text).toEqual({ type: 'mrkdwn', text: '—' });
    expect(section(md` x `).text).toEqual({ type: 'mrkdwn', text: ' x ' });
    expect(context(md``).elements).toEqual([{ type: 'mrkdwn', text: '—' }]);
  });

  it('keeps a context block within its element limit', () => {
    const many = Array.from({ length: LIMITS.contextElements + 3 }, (_, i) => md`note ${i}`);
    const block = context(...many);
    expect(block.elements).toHaveLength(LIMITS.contextElements);
    expect(block.elements.at(-1)).toEqual({ type: 'mrkdwn', text: `note ${LIMITS.contextElements - 1}` });
  });
});
