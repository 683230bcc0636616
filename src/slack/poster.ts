import { webApi } from '@slack/bolt';
import type { Block, EntityMetadata, KnownBlock, MessageAttachment } from '@slack/types';
import type { ConversationFacts } from '../access.js';
import { type SlackMethod, SlackPostError } from './calls.js';
import { failureOfCode } from './error-codes.js';

export interface OutgoingMessage {
  channel: string;
  text: string;
  /** Block Kit's blocks, a chart (`data_visualization`) among them. */
  blocks: (KnownBlock | Block)[];
  /** Where a `table` block goes. */
  attachments?: MessageAttachment[] | undefined;
  /** Set for a reply in a thread. */
  threadTs?: string | undefined;
  /** Our id for the message, carried in its metadata so it can be found again after a crash. */
  messageId?: string | undefined;
  /** Work Objects a post carries (`metadata.entities`; `chat.update` takes none: docs/slack.md#work-objects). */
  entities?: EntityMetadata[] | undefined;
  /** Told Slack's answer to the post (whether it dropped the entities: src/slack/entity-warning.ts). */
  onAnswer?: ((answer: unknown) => Promise<void>) | undefined;
}

/** The Web API calls the bot makes on its own (not in reply to a request). */
export interface SlackPoster {
  /** `chat.postMessage`; resolves with the new message's `ts`. */
  post(message: OutgoingMessage): Promise<string>;
  /** `chat.update` of a message the bot posted. */
  update(message: OutgoingMessage & { ts: string }): Promise<void>;
  /** `chat.delete` of a message the bot posted. */
  remove(message: { channel: string; ts: string }): Promise<void>;
  /**
   * The `ts` of a message the bot posted with `messageId` between `oldest` and `latest` (epoch
   * ms), in the channel or in a thread: how an attempt whose answer was lost is confirmed or
   * not. Reads at most FIND_MAX_PAGES pages; beyond them it cannot tell, and says so
   * (`refused`, `search_too_long`).
   */
  find(where: {
    channel: string;
    threadTs?: string | undefined;
    oldest: number;
    latest: number;
    messageId: string;
  }): Promise<string | undefined>;
  /** `conversations.info`: what kind of conversation it is. */
  conversation(channel: string): Promise<ConversationFacts>;
}

/** The metadata event type that marks the bot's own messages. */
export const MESSAGE_EVENT_TYPE = 'payments_bot_message';

/** Messages per page when `find` reads a channel or a thread (Slack allows up to 1,000; 200 is advised)... */
export const FIND_PAGE_SIZE = 200;
/** ...and at most this many pages: 1,000 messages in the few minutes around one attempt. */
export const FIND_MAX_PAGES = 5;

/** The blocks some workspaces do not take yet (docs/slack.md#charts-and-tables). */
const NEWER_BLOCKS: ReadonlySet<string> = new Set(['data_visualization', 'data_table']);

/**
 * The message without its charts and tables, for a workspace that answers `invalid_blocks` to
 * them; `undefined` when it has none, so a message that is invalid for another reason is not
 * sent twice. Its text already carries the charts' figures, digit for digit.
 */
function withoutNewerBlocks<T extends Pick<OutgoingMessage, 'blocks' | 'attachments'>>(
  message: T,
): T | undefined {
  const blocks = message.blocks.filter((b) => !NEWER_BLOCKS.has(b.type));
  if (blocks.length === message.blocks.length && message.attachments === undefined) return undefined;
  return { ...message, blocks, attachments: undefined };
}

/**
 * Sends `message`; when Slack refuses it with `invalid_blocks` and it holds charts or tables,
 * sends it once more without them: the workspace gets the message, never nothing.
 */
async function orWithoutNewerBlocks<M extends OutgoingMessage, R>(
  message: M,
  send: (message: M) => Promise<R>,
): Promise<R> {
  try {
    return await send(message);
  } catch (error) {
    const refused = error instanceof SlackPostError && error.slackError === 'invalid_blocks';
    const plain = refused ? withoutNewerBlocks(message) : undefined;
    if (plain === undefined) throw error;
    return send(plain);
  }
}

/** Why a call failed, in the bot's terms: Slack's code read by the method's table (src/slack/error-codes.ts). */
function failureOf(method: SlackMethod, error: unknown): SlackPostError {
  if (error instanceof webApi.WebAPIPlatformError) {
    const code = error.data.error;
    const failure = failureOfCode(method, code);
    // `ratelimited` without a 429 names no wait: a second. Other slow-downs leave it to the caller.
    const retryAfterMs = code === 'ratelimited' ? 1000 : undefined;
    return new SlackPostError(failure, code, retryAfterMs, { cause: error });
  }
  if (error instanceof webApi.WebAPIRateLimitedError) {
    return new SlackPostError('rate_limited', 'ratelimited', error.retryAfter * 1000, { cause: error });
  }
  // No answer, a time-out, a 5xx: the call may or may not have been carried out.
  return new SlackPostError('transient', undefined, undefined, { cause: error });
}

/** Told of each Web API call and how it ended: `ok` or the failure. */
type OnSlackCall = (method: SlackMethod, result: string) => void;

/**
 * A poster over the Web API that never retries by itself: a 429 comes back at once with its
 * Retry-After, so the outbox can wait without holding anything (docs/slack.md#posting).
 */
/**
 * The bot's own posts with `token`: no retries inside the SDK, so a 429 comes back at once for
 * the outbox to wait out.
 */
export function botPoster(
  token: string,
  options: webApi.WebClientOptions,
  onCall?: OnSlackCall,
): SlackPoster {
  return createSlackPoster(posterClient(token, options), onCall);
}

/**
 * The Web API client a poster calls through: no retries of its own and a 429 thrown at once
 * (the outbox decides when to try again), so it never pauses its queue and one client can post
 * for many installations, each call with its own token (`createSlackPoster`'s `token`).
 */
export const posterClient = (token: string | undefined, options: webApi.WebClientOptions) =>
  new webApi.WebClient(token, { ...options, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true });

export function createSlackPoster(
  client: webApi.WebClient,
  onCall?: OnSlackCall,
  /** The bot token each call is made with, when the client is shared by installations. */
  token?: string,
): SlackPoster {
  const as = token ? { token } : {};
  async function call<T>(method: SlackMethod, work: () => Promise<T>): Promise<T> {
    try {
      const result = await work();
      onCall?.(method, 'ok');
      return result;
    } catch (error) {
      const failure = failureOf(method, error);
      onCall?.(method, failure.failure);
      throw failure;
    }
  }
  const metadata = (messageId: string | undefined) =>
    messageId ? { metadata: { event_type: MESSAGE_EVENT_TYPE, event_payload: { id: messageId } } } : {};
  const postOnce = async ({
    channel,
    text,
    blocks,
    attachments,
    threadTs,
    messageId,
    entities,
    onAnswer,
  }: OutgoingMessage) => {
    const event = metadata(messageId);
    const result = await call('chat.postMessage', () =>
      client.chat.postMessage({
        ...as,
        channel,
        text,
        blocks,
        ...(attachments ? { attachments } : {}),
        ...(threadTs ? { thread_ts: threadTs } : {}),
        ...(entities ? { metadata: { ...event.metadata, entities } } : event),
        unfurl_links: false,
        unfurl_media: false,
      }),
    );
    if (!result.ts) throw new SlackPostError('refused', 'no_ts');
    await onAnswer?.(result);
    return result.ts;
  };
  return {
    post: (message) => orWithoutNewerBlocks(message, postOnce),

    update: (message) =>
      orWithoutNewerBlocks(message, async ({ channel, ts, text, blocks, attachments, messageId }) => {
        await call('chat.update', () =>
          client.chat.update({
            ...as,
            channel,
            ts,
            text,
            blocks,
            ...(attachments ? { attachments } : {}),
            ...metadata(messageId),
          }),
        );
      }),

    async remove({ channel, ts }) {
      await call('chat.delete', () => client.chat.delete({ ...as, channel, ts }));
    },

    async find({ channel, threadTs, oldest, latest, messageId }) {
      // Whole seconds, widened by one each way for rounding.
      const window = {
        oldest: (Math.floor(oldest / 1000) - 1).toString(),
        latest: (Math.ceil(latest / 1000) + 1).toString(),
        include_all_metadata: true,
        limit: FIND_PAGE_SIZE,
      };
      let cursor: string | undefined;
      for (let page = 0; page < FIND_MAX_PAGES; page += 1) {
        const paging = cursor ? { cursor } : {};
        const result = await call(threadTs ? 'conversations.replies' : 'conversations.history', () =>
          threadTs
            ? client.conversations.replies({ ...as, channel, ts: threadTs, ...window, ...paging })
            : client.conversations.history({ ...as, channel, ...window, ...paging }),
        );
        const found = result.messages?.find(
          (m) =>
            m.metadata?.event_type === MESSAGE_EVENT_TYPE &&
            (m.metadata.event_payload as Record<string, unknown> | undefined)?.id === messageId,
        );
        if (found) return found.ts;
        cursor = result.response_metadata?.next_cursor || undefined;
        if (!cursor) return undefined;
      }
      throw new SlackPostError('refused', 'search_too_long');
    },

    async conversation(channel) {
      const { channel: info } = await call('conversations.info', () =>
        client.conversations.info({ ...as, channel }),
      );
      return {
        isPrivate: Boolean(info?.is_private || info?.is_im || info?.is_mpim),
        isDirect: Boolean(info?.is_im || info?.is_mpim),
        isShared: Boolean(info?.is_ext_shared || info?.is_shared || info?.is_pending_ext_shared),
      };
    },
  };
}
