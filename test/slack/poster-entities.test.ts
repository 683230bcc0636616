import { webApi } from '@slack/bolt';
import type { EntityMetadata } from '@slack/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSlackPoster, MESSAGE_EVENT_TYPE } from '../../src/slack/poster.js';
import { invoiceCardEntity } from '../../src/views/invoice-entity.js';
import { invoice } from '../support/factories.js';
import { type SlackStandIn, startSlackStandIn } from '../support/slack-stand-in.js';

/**
 * Issue 41 §1 and §3 on the wire: a live card's Work Object goes out in chat.postMessage's
 * metadata beside the event metadata the card is found by, and Slack's "dropped it" warning
 * reaches whoever posted it.
 */
const TOKEN = 'xoxb-poster-entities';
const BLOCKS = [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text: 'Open' } }];

let slack: SlackStandIn;
beforeAll(async () => {
  slack = await startSlackStandIn({ teamId: 'T0HOME', botToken: TOKEN });
});
afterAll(() => slack.close());

const poster = () =>
  createSlackPoster(new webApi.WebClient(TOKEN, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } }));
const entity: EntityMetadata = invoiceCardEntity(invoice(), { installation: '' });

describe('a post with a Work Object', () => {
  it('sends the entities and the message id in one metadata', async () => {
    await poster().post({
      channel: 'C0LIVE',
      text: 'card',
      blocks: BLOCKS,
      messageId: 'watch-1',
      entities: [entity],
    });
    const args = slack.calls.filter((c) => c.method === 'chat.postMessage').at(-1)?.args;
    expect(args?.metadata).toEqual({
      event_type: MESSAGE_EVENT_TYPE,
      event_payload: { id: 'watch-1' },
      entities: [entity],
    });
  });

  it('tells its poster Slack’s answer, warning included, and still returns the card’s ts', async () => {
    slack.answerNext('chat.postMessage', {
      ok: true,
      ts: '1700000001.000100',
      warning: 'invalid_metadata_format',
    });
    const answers: unknown[] = [];
    const ts = await poster().post({
      channel: 'C0LIVE',
      text: 'card',
      blocks: BLOCKS,
      entities: [entity],
      onAnswer: async (answer) => void answers.push(answer),
    });
    expect(ts).toBe('1700000001.000100');
    expect(answers).toEqual([expect.objectContaining({ warning: 'invalid_metadata_format' })]);
  });
});
