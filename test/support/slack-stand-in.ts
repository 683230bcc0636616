import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { blockKitProblems } from './block-kit.js';
import { socketModeServer } from './slack-stand-in-socket.js';
import {
  type ApiCall,
  arrive,
  type ResponsePost,
  type StandInState,
  standInState,
  waiter,
} from './slack-stand-in-state.js';
import { webApiAnswer } from './slack-stand-in-web-api.js';

/**
 * A local stand-in for Slack, following docs/slack.md: the Web API under `apiUrl`
 * (auth.test, apps.connections.open, chat.unfurl), `response_url` endpoints, and a Socket Mode
 * WebSocket server. Everything the bot sends is recorded and checked against Block Kit's limits.
 * The Web API's methods are in slack-stand-in-web-api.ts, the Socket Mode server in
 * slack-stand-in-socket.ts, what the stand-in keeps in slack-stand-in-state.ts.
 */

/** A message in a channel, as the stand-in keeps it. */
export interface StandInMessage {
  channel: string;
  ts: string;
  threadTs: string | undefined;
  text: string;
  blocks: unknown[];
  /** Where a `table` block goes. */
  attachments?: unknown[] | undefined;
  metadata?: { event_type: string; event_payload: Record<string, unknown> } | undefined;
  /** Each edit, oldest first; the last is what people see. */
  edits: { text: string; blocks: unknown[] }[];
  deleted: boolean;
}

export interface StandInOptions {
  teamId: string;
  botToken: string;
  appToken?: string;
  /** Delay before answering auth.test, to catch the bot while it starts. */
  authDelayMs?: number;
  /**
   * Fields auth.test answers with besides the workspace's: an organisation-wide token's shape is
   * `{ team_id: 'E…', enterprise_id: 'E…', is_enterprise_install: true }` (docs/slack.md#install).
   */
  authTest?: Record<string, unknown>;
  /** The OAuth client `oauth.v2.access` accepts (many workspaces). */
  clientId?: string;
  clientSecret?: string;
}

export interface SlackStandIn {
  readonly url: string;
  readonly apiUrl: string;
  readonly calls: ApiCall[];
  /** Messages the bot posted with chat.postMessage, with their edits. */
  readonly messages: StandInMessage[];
  /**
   * Conversations by id, for conversations.info; a channel missing here is one the bot is not in.
   * One with `is_member: false` is a public channel the bot posts in without having joined it
   * (`chat:write.public`): its history and threads answer `not_in_channel`, as Slack's do.
   */
  readonly conversations: Map<string, Record<string, unknown>>;
  /** users.info answers by user id (`team_id`, `enterprise_user`); anyone else is of the home team. */
  readonly people: Map<string, Record<string, unknown>>;
  /**
   * Many workspaces: bot tokens besides `botToken`, each with what auth.test answers for it
   * (`team_id`, `user_id`, `bot_id`, …).
   */
  readonly tokens: Map<string, Record<string, unknown>>;
  /**
   * OAuth codes `oauth.v2.access` exchanges, each once, for this answer (`team`, `access_token`,
   * `authed_user`, …); its `access_token` joins `tokens`. An unknown or used code is `invalid_code`.
   * With a `refresh_token` (token rotation), `grant_type=refresh_token` exchanges it, once, for a
   * new token and refresh token.
   */
  readonly oauthCodes: Map<string, Record<string, unknown>>;
  /** Modals opened (`views.open`), with the trigger they answered, oldest first. */
  readonly modals: { triggerId: string; view: Record<string, unknown>; token: string | undefined }[];
  /** Home views published, per user, latest last. */
  readonly homeViews: { userId: string; view: Record<string, unknown> }[];
  /** Custom step results: `functions.completeSuccess` and `functions.completeError` calls. */
  readonly functionResults: {
    method: string;
    executionId: string;
    outputs?: unknown;
    error?: string;
    token: string | undefined;
  }[];
  /** The next `count` calls of `method` are refused with HTTP 429 and this Retry-After (seconds). */
  rateLimitNext(method: string, retryAfterSeconds: number, count?: number): void;
  /** Every Web API call answers this HTTP status, taking nothing, until called with `undefined`. */
  outage(status: number | undefined): void;
  /**
   * The next call of `method` (the next `times` calls) gets this answer instead of the usual
   * one, with HTTP `status` (200 unless given).
   */
  answerNext(method: string, body: Record<string, unknown>, opts?: { status?: number; times?: number }): void;
  /**
   * The next call of `method` is done as usual (a post is taken and kept) but answered `delayMs`
   * later: a caller that gives up before then cannot tell it went through.
   */
  answerLate(method: string, delayMs: number): void;
  /** Thread replies under `threadTs`, or top-level posts when it is undefined, not deleted. */
  repliesIn(channel: string, threadTs?: string): StandInMessage[];
  readonly posts: ResponsePost[];
  /** Block Kit problems in anything the bot sent; tests expect none. */
  readonly problems: string[];
  /**
   * A fresh response_url. `status` makes it answer with that error, as an expired one does: for
   * the first `failures` posts only when that is given, for all of them otherwise.
   */
  responseUrl(opts?: { status?: number; failures?: number }): string;
  waitForPost(url: string, timeoutMs?: number): Promise<ResponsePost>;
  waitForCall(method: string, timeoutMs?: number): Promise<ApiCall>;
  socket: {
    /** Resolves once the bot has connected and been sent `hello`. */
    connected(timeoutMs?: number): Promise<void>;
    /** Sends an envelope and resolves with the bot's ack message for it. */
    send(
      type: string,
      payload: unknown,
      timeoutMs?: number,
    ): Promise<{ envelope_id: string; payload?: unknown; ms: number }>;
    /** Sends an envelope, then closes the connection at once, before the bot can ack it. */
    sendAndClose(type: string, payload: unknown): void;
  };
  close(): Promise<void>;
}

const readBody = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

/** Web API arguments: form-encoded with JSON-encoded objects, or a JSON body. */
function parseArgs(raw: string, contentType: string | undefined): Record<string, unknown> {
  if (contentType?.includes('application/json'))
    return raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
  const args: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    args[key] = /^[[{]/.test(value) ? JSON.parse(value) : value;
  }
  return args;
}

/**
 * A Web API call: recorded, then answered as the test said (an outage, a rate limit, an answer
 * set with `answerNext`, late with `answerLate`) or else as the method does.
 */
async function serveWebApi(
  state: StandInState,
  req: IncomingMessage,
  res: ServerResponse,
  raw: string,
  path: string,
): Promise<void> {
  const method = path.slice('/api/'.length);
  const args = parseArgs(raw, req.headers['content-type']);
  const bearer = req.headers.authorization?.replace(/^Bearer /, '');
  arrive(state.calls, { method, args, raw, token: bearer, at: Date.now() });
  const lateMs = state.lateAnswers.get(method) ?? 0;
  state.lateAnswers.delete(method);
  const json = (status: number, body: unknown) => {
    const answer = () => {
      if (res.destroyed) return; // the caller gave up
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (lateMs > 0) setTimeout(answer, lateMs).unref();
    else answer();
  };
  if (state.outage !== undefined) return json(state.outage, { ok: false, error: 'service_unavailable' });
  const limit = state.rateLimits.get(method);
  if (limit && limit.count > 0) {
    limit.count -= 1;
    res.writeHead(429, { 'retry-after': String(limit.retryAfter), 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: false, error: 'ratelimited' }));
    return;
  }
  const answer = state.answers.get(method);
  if (answer) {
    answer.times -= 1;
    if (answer.times === 0) state.answers.delete(method);
    return json(answer.status, answer.body);
  }
  json(200, await webApiAnswer({ state, method, args, bearer }));
}

/** A post to a response_url: refused while its fault lasts, else recorded and checked. */
function serveResponseUrl(state: StandInState, res: ServerResponse, raw: string, path: string): void {
  const url = `${state.base}${path}`;
  const fault = state.responseFaults.get(url);
  if (fault && fault.failures > 0) {
    fault.failures -= 1;
    res.writeHead(fault.status).end('expired_url');
    return;
  }
  const body = JSON.parse(raw) as Record<string, unknown>;
  const post = { url, body, raw, at: Date.now() };
  arrive(state.posts, post);
  state.problems.push(...blockKitProblems(body).map((p) => `response_url: ${p}`));
  res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
}

export async function startSlackStandIn(options: StandInOptions): Promise<SlackStandIn> {
  const state = standInState(options);
  const { calls, posts, messages, responseFaults } = state;

  const server = createServer(async (req, res) => {
    const raw = await readBody(req);
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path.startsWith('/api/')) return serveWebApi(state, req, res, raw, path);
    if (path.startsWith('/response/')) return serveResponseUrl(state, res, raw, path);
    res.writeHead(404).end();
  });
  const socket = socketModeServer(server, state.problems);

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  state.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const base = state.base;

  return {
    url: base,
    apiUrl: `${base}/api/`,
    calls,
    posts,
    problems: state.problems,
    messages,
    conversations: state.conversations,
    people: state.people,
    tokens: state.tokens,
    oauthCodes: state.oauthCodes,
    modals: state.modals,
    homeViews: state.homeViews,
    functionResults: state.functionResults,
    rateLimitNext(method, retryAfterSeconds, count = 1) {
      state.rateLimits.set(method, { retryAfter: retryAfterSeconds, count });
    },
    outage(status) {
      state.outage = status;
    },
    answerNext(method, body, { status = 200, times = 1 } = {}) {
      state.answers.set(method, { body, status, times });
    },
    answerLate(method, delayMs) {
      state.lateAnswers.set(method, delayMs);
    },
    repliesIn(channel, threadTs) {
      return messages.filter((m) => m.channel === channel && m.threadTs === threadTs && !m.deleted);
    },
    responseUrl(opts = {}) {
      const url = `${base}/response/${randomUUID()}`;
      if (opts.status)
        responseFaults.set(url, { status: opts.status, failures: opts.failures ?? Number.POSITIVE_INFINITY });
      return url;
    },
    waitForPost: (url, timeoutMs = 15_000) =>
      waiter(posts, (p) => p.url === url, `a post to ${url}`, timeoutMs),
    waitForCall: (method, timeoutMs = 15_000) =>
      waiter(calls, (c) => c.method === method, `a ${method} call`, timeoutMs),
    socket: { connected: socket.connected, send: socket.send, sendAndClose: socket.sendAndClose },
    async close() {
      socket.close();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
