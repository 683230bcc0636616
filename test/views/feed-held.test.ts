import { describe, expect, it } from 'vitest';
import { Amount } from '../../src/payments/index.js';
import type { Message } from '../../src/views/blocks.js';
import { HELD_SINCE_LAST_POST, withHeld } from '../../src/views/feed-settings.js';
import { expectValidMessage, visibleText } from '../support/block-kit.js';

/** What a feed post says of the movements held below the channel's minimums since the last one. */

const post = (sectionChars: number): Message => ({
  text: 'Received: +0.5 BTC',
  blocks: Array.from({ length: 4 }, (_, i) => ({
    type: 'section' as const,
    block_id: `s${i}`,
    text: { type: 'mrkdwn' as const, text: 'x'.repeat(sectionChars) },
  })),
});

const held = [{ currency: 'BTC', sum: Amount.parse('0.0012') as Amount, count: 2 }];

describe('the held note under a post', () => {
  it('is a line under the movements, and in the notification text, each sum exact', () => {
    const message = withHeld(post(100), held, HELD_SINCE_LAST_POST);
    expectValidMessage(message);
    expect(visibleText(message)).toContain(`${HELD_SINCE_LAST_POST}: +0.0012 BTC (2 movements)`);
    expect(message.text).toBe(`Received: +0.5 BTC ${HELD_SINCE_LAST_POST}: +0.0012 BTC (2 movements)`);
  });

  it('stays in the text alone when the post is already near Slack’s size, so the post is not refused', () => {
    const full = post(2960);
    const message = withHeld(full, held, HELD_SINCE_LAST_POST);
    expectValidMessage(message);
    expect(message.blocks).toEqual(full.blocks);
    expect(message.text).toContain('+0.0012 BTC (2 movements)');
  });
});
