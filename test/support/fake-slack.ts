import type { ConversationFacts } from '../../src/access.js';
import { SlackPostError } from '../../src/slack/calls.js';
import type { OutgoingMessage, SlackPoster } from '../../src/slack/poster.js';
import { blockKitProblems } from './block-kit.js';

/** A message as the fake Slack keeps it. */
export interface PostedMessage extends OutgoingMessage {
  ts: string;
  /** Every version after `chat.update`, oldest first; the last is what people see. */
  edits: OutgoingMessage[];
  deleted: boolean;
}

export interface RecordingPoster extends SlackPoster {
  readonly messages: PostedMessage[];
  /** Every call, in order: `post C1`, `update C1 1.000002`, … */
  readonly calls: string[];
  /** Block Kit problems in anything posted or edited (refused, as Slack does, with invalid_blocks). */
  readonly problems: string[];
  /** Channels the bot is not in: posts there fail with not_in_channel. */
  readonly closedChannels: Set<string>;
  conversations: Map<string, ConversationFacts>;
  /** The next `count` calls fail with this failure. */
  failNext(failure: SlackPostError, count?: number): void;
  /** Thread replies under `threadTs`, or top-level posts in `channel` when it is undefined. */
  repliesIn(channel: string, threadTs?: string): PostedMessage[];
}

/**
 * An in-memory stand-in for the Web API calls the bot makes on its own, for unit tests: it
 * keeps every message, its edits and its metadata id, so a test can read a channel as a person
 * would and check that nothing was posted twice.
 */
export function recordingPoster(): RecordingPoster {
  const messages: PostedMessage[] = [];
  const calls: string[] = [];
  const problems: string[] = [];
  const failures: SlackPostError[] = [];
  let seq = 0;
  const nextTs = () => {
    seq += 1;
    return `1700000000.${String(seq).padStart(6, '0')}`;
  };
  const check = (what: string, message: OutgoingMessage) => {
    const found = blockKitProblems({ text: message.text, blocks: message.blocks });
    problems.push(...found.map((p) => `${what}: ${p}`));
    if (found.length > 0) throw new SlackPostError('refused', 'invalid_blocks');
  };
  const fail = () => {
    const failure = failures.shift();
    if (failure) throw failure;
  };

  const poster: RecordingPoster = {
    messages,
    calls,
    problems,
    closedChannels: new Set(),
    conversations: new Map(),
    failNext(failure, count = 1) {
      for (let i = 0; i < count; i += 1) failures.push(failure);
    },
    repliesIn(channel, threadTs) {
      return messages.filter((m) => m.channel === channel && m.threadTs === threadTs && !m.deleted);
    },

    async post(message) {
      calls.push(`post ${message.channel}${message.threadTs ? ` thread ${message.threadTs}` : ''}`);
      fail();
      if (poster.closedChannels.has(message.channel))
        throw new SlackPostError('not_in_channel', 'not_in_channel');
      check('chat.postMessage', message);
      const ts = nextTs();
      messages.push({ ...message, ts, edits: [], deleted: false });
      return ts;
    },

    async update(message) {
      calls.push(`update ${message.channel} ${message.ts}`);
      fail();
      const target = messages.find((m) => m.channel === message.channel && m.ts === message.ts && !m.deleted);
      if (!target) throw new SlackPostError('message_not_found', 'message_not_found');
      check('chat.update', message);
      target.edits.push(message);
    },

    async remove({ channel, ts }) {
      calls.push(`delete ${channel} ${ts}`);
      const target = messages.find((m) => m.channel === channel && m.ts === ts);
      if (target) target.deleted = true;
    },

    async find({ channel, threadTs, messageId }) {
      calls.push(`find ${channel}`);
      fail();
      return messages.find(
        (m) => m.channel === channel && m.threadTs === threadTs && m.messageId === messageId,
      )?.ts;
    },

    async conversation(channel) {
      calls.push(`info ${channel}`);
      fail();
      const facts = poster.conversations.get(channel);
      if (!facts) throw new SlackPostError('not_in_channel', 'channel_not_found');
      return facts;
    },
  };
  return poster;
}

/** What a person sees of a message: its latest version. */
export const latest = (m: PostedMessage): OutgoingMessage => m.edits.at(-1) ?? m;
