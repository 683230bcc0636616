import { webApi } from '@slack/bolt';

/**
 * Slack as the bot's Web API client sees it, in memory and synchronous, for property tests that
 * run the real poster (src/slack/poster.ts) and so the real reading of Slack's answers: it
 * posts, edits and reads conversations, honouring `oldest`/`latest` as Slack does against its
 * own clock, and answers each call as a script says (ok, an error code, an HTTP 429 or 5xx, no
 * answer at all), possibly after having carried the call out.
 */

/** How Slack answers the next call. `taken`: it carried the call out before the answer was lost. */
export type Answer =
  | { kind: 'code'; code: string; taken: boolean }
  | { kind: 'http429'; retryAfterSeconds: number }
  | { kind: 'http5xx'; status: number; taken: boolean }
  | { kind: 'no_answer'; taken: boolean };

/** What the test makes of a code Slack answered to a method (its own reading of Slack's pages). */
export type Meaning = 'temporary' | 'closed' | 'gone' | 'refused';

export type ModelMethod =
  | 'chat.postMessage'
  | 'chat.update'
  | 'conversations.history'
  | 'conversations.replies';

export interface ModelMessage {
  channel: string;
  threadTs: string | undefined;
  ts: string;
  text: string;
  messageId: string | undefined;
  /** Texts it was edited to, oldest first. */
  edits: string[];
}

export interface SlackModelOptions {
  /** Slack's clock (epoch ms), which makes each message's `ts`. */
  clock: () => number;
  /** Conversations the bot may not read, with the code Slack answers a read there. */
  unreadable: Readonly<Record<string, string>>;
  meaning: (method: ModelMethod, code: string) => Meaning;
}

type Args = Record<string, unknown>;
const idOf = (args: Args) =>
  (args.metadata as { event_payload?: { id?: string } } | undefined)?.event_payload?.id;

const platform = (code: string) => new webApi.WebAPIPlatformError({ ok: false, error: code });
const errorOf = (answer: Answer): Error => {
  switch (answer.kind) {
    case 'code':
      return platform(answer.code);
    case 'http429':
      return new webApi.WebAPIRateLimitedError(answer.retryAfterSeconds);
    case 'http5xx':
      return new webApi.WebAPIHTTPError(answer.status, 'Slack is having trouble', {}, '');
    case 'no_answer':
      return new webApi.WebAPIRequestError(new Error('socket hang up'));
  }
};

/** What Slack holds, and what the test learns of each message (by our id) along the way. */
function modelState() {
  const posted: ModelMessage[] = [];
  return {
    posted,
    answers: [] as Answer[],
    archived: new Set<string>(),
    /** Refused for good: the post or edit, or the thread it replies to, gone. */
    refused: new Set<string>(),
    /** Posted, but the bot was not told (the answer lost, or it died before recording it). */
    unconfirmed: new Set<string>(),
    /** Posted before, then the bot could not look for it: it posts again, by design. */
    mayRepeat: new Set<string>(),
    /** Our id of the message the bot is looking for (a read carries none): told by the test's poster. */
    lookingFor: undefined as string | undefined,
    seq: 0,
    isPosted: (id: string | undefined) => id !== undefined && posted.some((m) => m.messageId === id),
  };
}
type State = ReturnType<typeof modelState>;

/** Notes what a refusal of `id` by `method` means for the message, as the test reads Slack's pages. */
function refusedBy(state: State, options: SlackModelOptions, method: ModelMethod, code: string, id?: string) {
  const meaning = options.meaning(method, code);
  if (id === undefined || meaning === 'temporary') return;
  const isLook = method === 'conversations.history' || method === 'conversations.replies';
  if (!isLook || meaning === 'gone') state.refused.add(id);
  else if (state.isPosted(id)) state.mayRepeat.add(id);
}

/** Carries out a call (`work`, which throws Slack's own refusal) as the next scripted answer says. */
function answer<T>(
  state: State,
  options: SlackModelOptions,
  method: ModelMethod,
  args: Args,
  work: () => T,
): T {
  const id = idOf(args) ?? (method.startsWith('conversations.') ? state.lookingFor : undefined);
  const next = state.answers.shift();
  if (!next) {
    try {
      return work();
    } catch (error) {
      if (error instanceof webApi.WebAPIPlatformError)
        refusedBy(state, options, method, error.data.error, id);
      throw error;
    }
  }
  if ('taken' in next && next.taken) {
    const before = state.isPosted(id);
    try {
      work();
    } catch {
      // Slack refused it; the bot hears the scripted answer instead, and learns on the next try.
    }
    if (!before && state.isPosted(id) && id !== undefined) state.unconfirmed.add(id);
  }
  if (next.kind === 'code') refusedBy(state, options, method, next.code, id);
  throw errorOf(next);
}

/** conversations.history or .replies: our messages between `oldest` and `latest`, by Slack's clock. */
function read(state: State, options: SlackModelOptions, method: ModelMethod, args: Args) {
  const closed = options.unreadable[String(args.channel)];
  if (closed) throw platform(closed);
  const threadTs = method === 'conversations.replies' ? String(args.ts) : undefined;
  const [oldest, latest] = [Number(args.oldest), Number(args.latest)];
  const messages = state.posted
    .filter((m) => m.channel === args.channel && m.threadTs === threadTs)
    .filter((m) => Number(m.ts) >= oldest && Number(m.ts) <= latest)
    .map((m) => ({
      ts: m.ts,
      metadata: { event_type: 'payments_bot_message', event_payload: { id: m.messageId } },
    }));
  return { ok: true, messages, response_metadata: { next_cursor: '' } };
}

function post(state: State, options: SlackModelOptions, args: Args) {
  if (state.archived.has(String(args.channel))) throw platform('is_archived');
  state.seq += 1;
  const ts = `${Math.floor(options.clock() / 1000)}.${String(state.seq).padStart(6, '0')}`;
  const threadTs = args.thread_ts === undefined ? undefined : String(args.thread_ts);
  const message = { channel: String(args.channel), threadTs, ts, text: String(args.text) };
  state.posted.push({ ...message, messageId: idOf(args), edits: [] });
  return { ok: true, channel: message.channel, ts };
}

function update(state: State, args: Args) {
  if (state.archived.has(String(args.channel))) throw platform('is_inactive');
  const target = state.posted.find((m) => m.channel === args.channel && m.ts === args.ts);
  if (!target) throw platform('message_not_found');
  target.edits.push(String(args.text));
  return { ok: true, channel: target.channel, ts: target.ts };
}

export function slackModel(options: SlackModelOptions) {
  const state = modelState();
  const call = <T>(method: ModelMethod, args: Args, work: () => T) =>
    answer(state, options, method, args, work);
  const client = {
    chat: {
      postMessage: async (args: Args) => call('chat.postMessage', args, () => post(state, options, args)),
      update: async (args: Args) => call('chat.update', args, () => update(state, args)),
    },
    conversations: {
      history: async (args: Args) =>
        call('conversations.history', args, () => read(state, options, 'conversations.history', args)),
      replies: async (args: Args) =>
        call('conversations.replies', args, () => read(state, options, 'conversations.replies', args)),
    },
  };
  const { posted, answers, archived, refused, unconfirmed, mayRepeat, isPosted } = state;
  return {
    /** The Web API client the real poster calls (only the methods the outbox uses). */
    client: client as unknown as webApi.WebClient,
    posted,
    answers,
    archived,
    refused,
    unconfirmed,
    mayRepeat,
    isPosted,
    /** The bot's next reads look for this message. */
    lookFor(id: string | undefined) {
      state.lookingFor = id;
    },
  };
}

export type SlackModel = ReturnType<typeof slackModel>;
