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

/** Who waits for an item of a list the stand-in keeps, by the list. */
const waiting = new WeakMap<readonly unknown[], Set<(item: unknown) => void>>();

/** Adds `item` to `list` and tells whoever waits for one like it, the moment it arrives. */
export function arrive<T>(list: T[], item: T): void {
  list.push(item);
  for (const look of [...(waiting.get(list) ?? [])]) look(item);
}

/**
 * Resolves with the first item of `list` that matches: one already there, or the first to
 * `arrive` until `timeoutMs`. A benchmark worker waiting for a reply starts its next command as
 * soon as the reply is in, as it does when the reply rides in the ack.
 */
export function waiter<T>(
  list: T[],
  match: (item: T) => boolean,
  what: string,
  timeoutMs: number,
): Promise<T> {
  const there = list.find(match);
  if (there !== undefined) return Promise.resolve(there);
  const looks = waiting.get(list) ?? new Set();
  waiting.set(list, looks);
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      looks.delete(look);
    };
    const look = (item: unknown) => {
      if (!match(item as T)) return;
      done();
      resolve(item as T);
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`timed out waiting for ${what}`));
    }, timeoutMs);
    looks.add(look);
  });
}
