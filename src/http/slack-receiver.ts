import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { type App, type Logger as BoltLogger, HTTPResponseAck, type Receiver } from '@slack/bolt';
import type { Logger } from '../logger.js';

/** Largest request body taken from Slack; Bolt's own default. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** How far a request's timestamp may be from our clock, either way (docs/slack.md#signing). */
export const MAX_CLOCK_SKEW_SECONDS = 5 * 60;

export type SignatureProblem =
  | 'no_signature'
  | 'bad_timestamp'
  | 'stale'
  | 'from_the_future'
  | 'signature_mismatch';

/**
 * Checks `v0=hex(HMAC-SHA256(secret, "v0:" + timestamp + ":" + body))` and that the timestamp is
 * within five minutes of now, in either direction (Bolt only refuses old ones).
 */
export function signatureProblem(
  secret: string,
  headers: { signature: string | undefined; timestamp: string | undefined },
  body: string,
  nowSeconds: number,
): SignatureProblem | undefined {
  const { signature, timestamp } = headers;
  if (!signature) return 'no_signature';
  if (!timestamp || !/^\d+$/.test(timestamp)) return 'bad_timestamp';
  const skew = Number(timestamp) - nowSeconds;
  if (skew < -MAX_CLOCK_SKEW_SECONDS) return 'stale';
  if (skew > MAX_CLOCK_SKEW_SECONDS) return 'from_the_future';
  const expected = Buffer.from(
    `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`,
  );
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected)
    ? undefined
    : 'signature_mismatch';
}

class BodyTooLarge extends Error {}

async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new BodyTooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isForm = (contentType: string | undefined) =>
  contentType?.split(';')[0]?.trim() === 'application/x-www-form-urlencoded';

/** A form post (commands; `payload=` for interactivity) or a JSON body (events), as Slack sends them. */
function parseBody(text: string, contentType: string | undefined): unknown {
  if (isForm(contentType)) {
    const form = parseQuery(text);
    return typeof form.payload === 'string' ? JSON.parse(form.payload) : form;
  }
  return JSON.parse(text);
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

export interface SlackReceiverOptions {
  signingSecret: string;
  logger: Logger;
  boltLogger: BoltLogger;
  /** Seconds since the epoch; tests move it. */
  nowSeconds?: () => number;
}

/**
 * Slack's HTTP endpoint (`POST /slack/events`) as a Bolt receiver whose server is the bot's own
 * (src/http/server.ts), so one server and one route table serve both modes. Every request gets
 * an answer: 413 too large, 401 unsigned, stale, from the future or forged, 400 not an object,
 * otherwise Bolt's ack (within 3 s) or 500 if processing throws before one.
 */
export class SlackHttpReceiver implements Receiver {
  #app: App | undefined;
  readonly #options: SlackReceiverOptions;

  constructor(options: SlackReceiverOptions) {
    this.#options = options;
  }

  init(app: App): void {
    this.#app = app;
  }

  /** Nothing to start or stop: the bot's HTTP server carries the endpoint. */
  async start(): Promise<void> {}
  async stop(): Promise<void> {}

  readonly handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const { logger } = this.#options;
    const refuse = (status: number, reason: string) => {
      logger.warn({ status, reason }, `request refused: ${reason.replace(/_/g, ' ')}`);
      res.writeHead(status).end();
    };
    let raw: Buffer;
    try {
      raw = await readBody(req, MAX_BODY_BYTES);
    } catch (error) {
      return error instanceof BodyTooLarge ? refuse(413, 'body_too_large') : refuse(400, 'unreadable_body');
    }
    const text = raw.toString('utf8');
    const contentType = header(req, 'content-type');
    // Slack's SSL check is unsigned and carries nothing to act on.
    if (isForm(contentType) && parseQuery(text).ssl_check === '1') {
      res.writeHead(200).end();
      return;
    }
    const nowSeconds = this.#options.nowSeconds?.() ?? Math.floor(Date.now() / 1000);
    const problem = signatureProblem(
      this.#options.signingSecret,
      { signature: header(req, 'x-slack-signature'), timestamp: header(req, 'x-slack-request-timestamp') },
      text,
      nowSeconds,
    );
    if (problem) return refuse(401, problem);

    let body: unknown;
    try {
      body = parseBody(text, contentType);
    } catch {
      return refuse(400, 'malformed_body');
    }
    if (!isObject(body)) return refuse(400, 'body_not_an_object');
    if (body.type === 'url_verification') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ challenge: body.challenge }));
      return;
    }

    const ack = new HTTPResponseAck({
      logger: this.#options.boltLogger,
      processBeforeResponse: false,
      httpRequest: req,
      httpRequestBody: body,
      httpResponse: res,
    });
    const retryNum = header(req, 'x-slack-retry-num');
    try {
      await this.#app?.processEvent({
        body,
        ack: ack.bind(),
        retryNum: retryNum === undefined ? undefined : Number(retryNum),
        retryReason: header(req, 'x-slack-retry-reason'),
      });
    } catch (error) {
      logger.error({ err: error }, 'processing a Slack request failed');
      if (!res.headersSent) {
        ack.ack(); // no "not acknowledged within 3 seconds" later: this answer is the last
        res.writeHead(500).end();
      }
    }
  };
}
