import { blockKitProblems } from './block-kit.js';
import type { SlackStandIn, StandInMessage, StandInOptions } from './slack-stand-in.js';

/** What the Slack stand-in (slack-stand-in.ts) keeps: everything the bot sent, and what it is told to answer. */

export interface ApiCall {
  method: string;
  args: Record<string, unknown>;
  /** The raw body, for leak checks. */
  raw: string;
  /** The bearer token the call carried, if any. */
  token: string | undefined;
  at: number;
}

export interface ResponsePost {
  url: string;
  body: Record<string, unknown>;
  raw: string;
  at: number;
}

export interface StandInState {
  readonly options: StandInOptions;
  /** The server's address, once it listens. */
  base: string;
  readonly calls: ApiCall[];
  readonly posts: ResponsePost[];
  /** Who waits for a post to a response_url, by the url: told the moment it arrives. */
  readonly postWaiters: Map<string, ((post: ResponsePost) => void)[]>;
  readonly problems: string[];
  readonly responseFaults: Map<string, { status: number; failures: number }>;
  readonly messages: StandInMessage[];
  readonly conversations: Map<string, Record<string, unknown>>;
  readonly people: Map<string, Record<string, unknown>>;
  readonly tokens: Map<string, Record<string, unknown>>;
  readonly oauthCodes: Map<string, Record<string, unknown>>;
  readonly refreshTokens: Map<string, Record<string, unknown>>;
  rotations: number;
  readonly homeViews: SlackStandIn['homeViews'];
  readonly modals: SlackStandIn['modals'];
  readonly functionResults: SlackStandIn['functionResults'];
  readonly rateLimits: Map<string, { retryAfter: number; count: number }>;
  readonly answers: Map<string, { body: Record<string, unknown>; status: number; times: number }>;
  readonly lateAnswers: Map<string, number>;
  outage: number | undefined;
  /** The next message's ts: the current second, then a sequence number. */
  nextTs(): string;
  /** Records the Block Kit problems of `message`, prefixed with `what`. */
  check(what: string, message: unknown): void;
}

export function standInState(options: StandInOptions): StandInState {
  let seq = 0;
  const problems: string[] = [];
  return {
    options,
    base: '',
    calls: [],
    posts: [],
    postWaiters: new Map(),
    problems,
    responseFaults: new Map(),
    messages: [],
    conversations: new Map(),
    people: new Map(),
    tokens: new Map(),
    oauthCodes: new Map(),
    refreshTokens: new Map(),
    rotations: 0,
    homeViews: [],
    modals: [],
    functionResults: [],
    rateLimits: new Map(),
    answers: new Map(),
    lateAnswers: new Map(),
    outage: undefined,
    nextTs() {
      seq += 1;
      return `${Math.floor(Date.now() / 1000)}.${String(seq).padStart(6, '0')}`;
    },
    check(what, message) {
      problems.push(...blockKitProblems(message).map((p) => `${what}: ${p}`));
    },
  };
}

/** Resolves with the first item of `list` that matches, looking every 10 ms until `timeoutMs`. */
export function waiter<T>(
  list: T[],
  match: (item: T) => boolean,
  what: string,
  timeoutMs: number,
): Promise<T> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const poll = () => {
      const index = list.findIndex(match);
      if (index !== -1) return resolve(list[index] as T);
      if (Date.now() - started > timeoutMs) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(poll, 10);
    };
    poll();
  });
}

/**
 * Resolves with the post to `url` the moment it arrives (or at once if it has), not at the next
 * look: a benchmark worker waiting for a reply starts its next command as soon as it is in, as it
 * does when the reply rides in the ack.
 */
export function postTo(state: StandInState, url: string, timeoutMs: number): Promise<ResponsePost> {
  const arrived = state.posts.find((p) => p.url === url);
  if (arrived) return Promise.resolve(arrived);
  return new Promise((resolve, reject) => {
    const waiting = () => state.postWaiters.get(url) ?? [];
    const timer = setTimeout(() => {
      // The waiters of now, not of when this one began: another may have begun waiting since.
      state.postWaiters.set(
        url,
        waiting().filter((w) => w !== told),
      );
      reject(new Error(`timed out waiting for a post to ${url}`));
    }, timeoutMs);
    const told = (post: ResponsePost) => {
      clearTimeout(timer);
      resolve(post);
    };
    state.postWaiters.set(url, [...waiting(), told]);
  });
}
