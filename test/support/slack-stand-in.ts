import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { blockKitProblems } from './block-kit.js';

/**
 * A local stand-in for Slack, following docs/slack.md: the Web API under `apiUrl`
 * (auth.test, apps.connections.open, chat.unfurl), `response_url` endpoints, and a Socket Mode
 * WebSocket server. Everything the bot sends is recorded and checked against Block Kit's limits.
 */

interface ApiCall {
  method: string;
  args: Record<string, unknown>;
  /** The raw body, for leak checks. */
  raw: string;
  /** The bearer token the call carried, if any. */
  token: string | undefined;
  at: number;
}

interface ResponsePost {
  url: string;
  body: Record<string, unknown>;
  raw: string;
  at: number;
}

/** A message in a channel, as the stand-in keeps it. */
export interface StandInMessage {
  channel: string;
  ts: string;
  threadTs: string | undefined;
  text: string;
  blocks: unknown[];
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

function waiter<T>(list: T[], match: (item: T) => boolean, what: string, timeoutMs: number): Promise<T> {
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

export async function startSlackStandIn(options: StandInOptions): Promise<SlackStandIn> {
  const calls: ApiCall[] = [];
  const posts: ResponsePost[] = [];
  const problems: string[] = [];
  const responseFaults = new Map<string, { status: number; failures: number }>();
  const messages: StandInMessage[] = [];
  const conversations = new Map<string, Record<string, unknown>>();
  const people = new Map<string, Record<string, unknown>>();
  const tokens = new Map<string, Record<string, unknown>>();
  const oauthCodes = new Map<string, Record<string, unknown>>();
  const refreshTokens = new Map<string, Record<string, unknown>>();
  let rotations = 0;
  const homeViews: SlackStandIn['homeViews'] = [];
  const modals: SlackStandIn['modals'] = [];
  const functionResults: SlackStandIn['functionResults'] = [];
  const rateLimits = new Map<string, { retryAfter: number; count: number }>();
  const answers = new Map<string, { body: Record<string, unknown>; status: number; times: number }>();
  const lateAnswers = new Map<string, number>();
  let outage: number | undefined;
  let seq = 0;
  const nextTs = () => {
    seq += 1;
    return `${Math.floor(Date.now() / 1000)}.${String(seq).padStart(6, '0')}`;
  };
  const check = (what: string, message: unknown) =>
    problems.push(...blockKitProblems(message).map((p) => `${what}: ${p}`));
  /** Slack answers calls about a channel it does not know, or the bot is not in, like this. */
  const canPost = (channel: string) => !String(channel).startsWith('CLOSED');
  let base = '';

  const server = createServer(async (req, res) => {
    const raw = await readBody(req);
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    let lateMs = 0;
    const json = (status: number, body: unknown) => {
      const answer = () => {
        if (res.destroyed) return; // the caller gave up
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (lateMs > 0) setTimeout(answer, lateMs).unref();
      else answer();
    };

    if (path.startsWith('/api/')) {
      const method = path.slice('/api/'.length);
      const args = parseArgs(raw, req.headers['content-type']);
      const bearer = req.headers.authorization?.replace(/^Bearer /, '');
      calls.push({ method, args, raw, token: bearer, at: Date.now() });
      lateMs = lateAnswers.get(method) ?? 0;
      lateAnswers.delete(method);
      if (outage !== undefined) return json(outage, { ok: false, error: 'service_unavailable' });
      const limit = rateLimits.get(method);
      if (limit && limit.count > 0) {
        limit.count -= 1;
        res.writeHead(429, { 'retry-after': String(limit.retryAfter), 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: false, error: 'ratelimited' }));
        return;
      }
      const answer = answers.get(method);
      if (answer) {
        answer.times -= 1;
        if (answer.times === 0) answers.delete(method);
        return json(answer.status, answer.body);
      }
      switch (method) {
        case 'oauth.v2.access': {
          if (args.client_id !== options.clientId || args.client_secret !== options.clientSecret)
            return json(200, { ok: false, error: 'invalid_client_id' });
          if (args.grant_type === 'refresh_token') {
            // Token rotation: a refresh token is good once, for a new token and a new refresh token.
            const identity = refreshTokens.get(String(args.refresh_token));
            if (!identity) return json(200, { ok: false, error: 'invalid_refresh_token' });
            refreshTokens.delete(String(args.refresh_token));
            rotations += 1;
            const token = `xoxe.xoxb-rotated-${rotations}-${randomUUID()}`;
            const refresh = `xoxe-1-refresh-${rotations}-${randomUUID()}`;
            tokens.set(token, identity);
            refreshTokens.set(refresh, identity);
            return json(200, {
              ok: true,
              token_type: 'bot',
              access_token: token,
              refresh_token: refresh,
              expires_in: 43_200,
            });
          }
          const exchanged = oauthCodes.get(String(args.code));
          if (!exchanged) return json(200, { ok: false, error: 'invalid_code' });
          oauthCodes.delete(String(args.code));
          const team = exchanged.team as { id: string } | null;
          const enterprise = exchanged.enterprise as { id: string } | null;
          const identity = {
            team_id: team?.id ?? enterprise?.id,
            enterprise_id: enterprise?.id,
            is_enterprise_install: exchanged.is_enterprise_install === true,
            user_id: exchanged.bot_user_id,
            bot_id: `B${String(exchanged.bot_user_id).slice(1)}`,
          };
          tokens.set(String(exchanged.access_token), identity);
          if (exchanged.refresh_token) refreshTokens.set(String(exchanged.refresh_token), identity);
          return json(200, { ok: true, token_type: 'bot', app_id: 'A0APP', ...exchanged });
        }
        case 'auth.test':
          if (options.authDelayMs) await new Promise((r) => setTimeout(r, options.authDelayMs));
          if (bearer !== undefined && tokens.has(bearer))
            return json(200, { ok: true, url: 'https://workspace.slack.test/', ...tokens.get(bearer) });
          if (bearer !== options.botToken) return json(200, { ok: false, error: 'invalid_auth' });
          return json(200, {
            ok: true,
            url: 'https://home.slack.test/',
            team: 'Home',
            user: 'payments',
            team_id: options.teamId,
            user_id: 'U0BOT',
            bot_id: 'B0BOT',
            ...options.authTest,
          });
        case 'users.info': {
          const user = String(args.user);
          return json(200, { ok: true, user: { id: user, team_id: options.teamId, ...people.get(user) } });
        }
        case 'apps.connections.open':
          if (!options.appToken || bearer !== options.appToken)
            return json(200, { ok: false, error: 'invalid_auth' });
          return json(200, { ok: true, url: `${base.replace('http', 'ws')}/socket-mode` });
        case 'chat.postMessage': {
          const channel = String(args.channel);
          if (!canPost(channel)) return json(200, { ok: false, error: 'not_in_channel' });
          check(`chat.postMessage ${channel}`, { text: args.text, blocks: args.blocks });
          const ts = nextTs();
          messages.push({
            channel,
            ts,
            threadTs: args.thread_ts === undefined ? undefined : String(args.thread_ts),
            text: String(args.text),
            blocks: (args.blocks ?? []) as unknown[],
            metadata: args.metadata as StandInMessage['metadata'],
            edits: [],
            deleted: false,
          });
          return json(200, { ok: true, channel, ts });
        }
        case 'chat.update': {
          const target = messages.find((m) => m.channel === args.channel && m.ts === args.ts && !m.deleted);
          if (!target) return json(200, { ok: false, error: 'message_not_found' });
          check(`chat.update ${target.channel}`, { text: args.text, blocks: args.blocks });
          target.edits.push({ text: String(args.text), blocks: (args.blocks ?? []) as unknown[] });
          return json(200, { ok: true, channel: target.channel, ts: target.ts });
        }
        case 'chat.delete': {
          const target = messages.find((m) => m.channel === args.channel && m.ts === args.ts);
          if (target) target.deleted = true;
          return json(200, { ok: true });
        }
        case 'conversations.replies':
        case 'conversations.history': {
          // Reading needs membership: a user id is no conversation; a public channel not joined is closed.
          if (String(args.channel).startsWith('U'))
            return json(200, { ok: false, error: 'channel_not_found' });
          if (conversations.get(String(args.channel))?.is_member === false)
            return json(200, { ok: false, error: 'not_in_channel' });
          const threadTs = method === 'conversations.replies' ? String(args.ts) : undefined;
          const oldest = Number(args.oldest ?? 0);
          const latest = Number(args.latest ?? Number.POSITIVE_INFINITY);
          const found = messages.filter(
            (m) =>
              m.channel === args.channel &&
              m.threadTs === threadTs &&
              Number(m.ts) >= oldest &&
              Number(m.ts) <= latest &&
              !m.deleted,
          );
          // History pages from the newest back, replies from the oldest on; `cursor` is where the next page starts.
          if (method === 'conversations.history') found.reverse();
          const start = Number(args.cursor ?? 0);
          const end = start + Number(args.limit ?? found.length);
          return json(200, {
            ok: true,
            messages: found.slice(start, end).map((m) => ({ ts: m.ts, text: m.text, metadata: m.metadata })),
            has_more: end < found.length,
            response_metadata: { next_cursor: end < found.length ? String(end) : '' },
          });
        }
        case 'conversations.info': {
          const info = conversations.get(String(args.channel));
          return info
            ? json(200, { ok: true, channel: info })
            : json(200, { ok: false, error: 'channel_not_found' });
        }
        case 'views.publish': {
          const view = args.view as Record<string, unknown>;
          problems.push(
            ...blockKitProblems(view, { requireText: false, maxBlocks: 100 }).map(
              (p) => `views.publish: ${p}`,
            ),
          );
          if (view?.type !== 'home') problems.push('views.publish: not a home view');
          homeViews.push({ userId: String(args.user_id), view });
          return json(200, { ok: true, view: { id: 'V1', ...view } });
        }
        case 'views.open': {
          const view = args.view as Record<string, unknown>;
          problems.push(...blockKitProblems(view, { requireText: false }).map((p) => `views.open: ${p}`));
          if (view?.type !== 'modal') problems.push('views.open: not a modal');
          modals.push({ triggerId: String(args.trigger_id), view, token: bearer });
          return json(200, { ok: true, view: { id: `V${modals.length}`, ...view } });
        }
        case 'functions.completeSuccess':
        case 'functions.completeError':
          functionResults.push({
            method,
            executionId: String(args.function_execution_id),
            outputs: args.outputs,
            error: args.error === undefined ? undefined : String(args.error),
            token: bearer,
          });
          return json(200, { ok: true });
        case 'chat.unfurl': {
          const unfurls = (args.unfurls ?? {}) as Record<string, unknown>;
          for (const [url, card] of Object.entries(unfurls)) {
            problems.push(
              ...blockKitProblems(card, { requireText: false }).map((p) => `chat.unfurl ${url}: ${p}`),
            );
          }
          return json(200, { ok: true });
        }
        default:
          return json(200, { ok: false, error: 'unknown_method' });
      }
    }

    if (path.startsWith('/response/')) {
      const url = `${base}${path}`;
      const fault = responseFaults.get(url);
      if (fault && fault.failures > 0) {
        fault.failures -= 1;
        res.writeHead(fault.status).end('expired_url');
        return;
      }
      const body = JSON.parse(raw) as Record<string, unknown>;
      posts.push({ url, body, raw, at: Date.now() });
      problems.push(...blockKitProblems(body).map((p) => `response_url: ${p}`));
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      return;
    }
    res.writeHead(404).end();
  });

  const wss = new WebSocketServer({ server, path: '/socket-mode' });
  let socket: WebSocket | undefined;
  const acks: { envelope_id: string; payload?: unknown; at: number }[] = [];
  wss.on('connection', (ws) => {
    socket = ws;
    ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as { envelope_id: string; payload?: unknown };
      acks.push({ ...message, at: Date.now() });
      // An empty ack carries `payload: {}`; anything more is a message and must be valid.
      if (message.payload && Object.keys(message.payload).length > 0) {
        problems.push(...blockKitProblems(message.payload).map((p) => `socket ack: ${p}`));
      }
    });
    ws.send(
      JSON.stringify({
        type: 'hello',
        num_connections: 1,
        debug_info: { host: 'stand-in', build_number: 1, approximate_connection_time: 18060 },
        connection_info: { app_id: 'A0APP' },
      }),
    );
  });

  function sendEnvelope(type: string, payload: unknown): string {
    if (!socket) throw new Error('no Socket Mode connection');
    const envelopeId = randomUUID();
    socket.send(
      JSON.stringify({
        envelope_id: envelopeId,
        type,
        payload,
        accepts_response_payload: true,
        retry_attempt: 0,
        retry_reason: '',
      }),
    );
    return envelopeId;
  }

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: base,
    apiUrl: `${base}/api/`,
    calls,
    posts,
    problems,
    messages,
    conversations,
    people,
    tokens,
    oauthCodes,
    modals,
    homeViews,
    functionResults,
    rateLimitNext(method, retryAfterSeconds, count = 1) {
      rateLimits.set(method, { retryAfter: retryAfterSeconds, count });
    },
    outage(status) {
      outage = status;
    },
    answerNext(method, body, { status = 200, times = 1 } = {}) {
      answers.set(method, { body, status, times });
    },
    answerLate(method, delayMs) {
      lateAnswers.set(method, delayMs);
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
    socket: {
      async connected(timeoutMs = 15_000) {
        await waiter([0], () => socket !== undefined, 'a Socket Mode connection', timeoutMs);
      },
      async send(type, payload, timeoutMs = 10_000) {
        const sentAt = Date.now();
        const envelopeId = sendEnvelope(type, payload);
        const ack = await waiter(
          acks,
          (a) => a.envelope_id === envelopeId,
          `the ack of ${envelopeId}`,
          timeoutMs,
        );
        return { envelope_id: ack.envelope_id, payload: ack.payload, ms: ack.at - sentAt };
      },
      sendAndClose(type, payload) {
        const current = socket;
        sendEnvelope(type, payload);
        socket = undefined;
        current?.close();
      },
    },
    async close() {
      for (const client of wss.clients) client.terminate();
      wss.close();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
