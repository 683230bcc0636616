import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ParsedUrlQuery, parse as parseQuery } from 'node:querystring';
import { type App, type Logger as BoltLogger, HTTPResponseAck, type Receiver } from '@slack/bolt';
import type { Logger } from '../logger.js';
import { answerAndClose, declaredLength, readBody } from './body.js';

/** Largest request body taken from Slack: its largest real request fits (docs/slack.md#request-limits). */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Largest unsigned body read: Slack's SSL check (`ssl_check=1&token=…`), its one unsigned request, is far smaller. */
const MAX_UNSIGNED_BODY_BYTES = 1024;
/** How far a request's timestamp may be from our clock, either way (docs/slack.md#signing). */
const MAX_CLOCK_SKEW_SECONDS = 5 * 60;

type SignatureProblem = 'no_signature' | 'bad_timestamp' | 'stale' | 'from_the_future' | 'signature_mismatch';

interface SignatureHeaders {
  signature: string | undefined;
  timestamp: string | undefined;
}

/**
 * What the headers alone say is wrong, before the body is read: no signature, a timestamp that is
 * not a number or is more than five minutes from now in either direction (Bolt only refuses old
 * ones), or a signature that cannot match any body (not `v0=` and 64 hex digits). A request
 * refused here would be refused after its body too: this only refuses it sooner.
 */
function headerProblem(headers: SignatureHeaders, nowSeconds: number): SignatureProblem | undefined {
  const { signature, timestamp } = headers;
  if (!signature) return 'no_signature';
  if (!timestamp || !/^\d+$/.test(timestamp)) return 'bad_timestamp';
  const skew = Number(timestamp) - nowSeconds;
  if (skew < -MAX_CLOCK_SKEW_SECONDS) return 'stale';
  if (skew > MAX_CLOCK_SKEW_SECONDS) return 'from_the_future';
  return /^v0=[0-9a-f]{64}$/.test(signature) ? undefined : 'signature_mismatch';
}

/**
 * Checks the headers (headerProblem), then `v0=hex(HMAC-SHA256(secret, "v0:" + timestamp + ":" +
 * body))`.
 */
export function signatureProblem(
  secret: string,
  headers: SignatureHeaders,
  body: string,
  nowSeconds: number,
): SignatureProblem | undefined {
  const early = headerProblem(headers, nowSeconds);
  if (early) return early;
  const expected = Buffer.from(
    `v0=${createHmac('sha256', secret).update(`v0:${headers.timestamp}:${body}`).digest('hex')}`,
  );
  const given = Buffer.from(headers.signature ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected)
    ? undefined
    : 'signature_mismatch';
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isForm = (contentType: string | undefined) =>
  contentType?.split(';')[0]?.trim() === 'application/x-www-form-urlencoded';

/** A request's body as read: its text, and its fields when it is a form (parsed once, here). */
interface Admitted {
  text: string;
  form: ParsedUrlQuery | undefined;
}

/** A form post (commands; `payload=` for interactivity) or a JSON body (events), as Slack sends them. */
function parseBody({ text, form }: Admitted): unknown {
  if (form) return typeof form.payload === 'string' ? JSON.parse(form.payload) : form;
  return JSON.parse(text);
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

interface SlackReceiverOptions {
  signingSecret: string;
  logger: Logger;
  boltLogger: BoltLogger;
  /** Seconds since the epoch; tests move it. */
  nowSeconds?: () => number;
}

/**
 * Slack's HTTP endpoint (`POST /slack/events`) as a Bolt receiver whose server is the bot's own
 * (src/http/server.ts), so one server and one route table serve both modes. Every request gets
 * an answer: 401 unsigned, stale, from the future or forged, 413 too large (these two from the
 * headers when they tell), 400 not an object, otherwise Bolt's ack (within 3 s) or 500 if
 * processing throws before one; a body that never arrives is cut off by the server (408).
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

  /** Logs a refusal and answers it, closing the connection (what is left of the body is never read). */
  #refuse(res: ServerResponse, status: number, reason: string, fields: Record<string, unknown> = {}): void {
    this.#options.logger.warn({ status, reason, ...fields }, `request refused: ${reason.replace(/_/g, ' ')}`);
    answerAndClose(res, status);
  }

  /**
   * The body of a request that may be Slack's, as text (and a form's fields, parsed once for the
   * SSL check and the request alike); undefined once the request is answered.
   * The headers are checked before a byte of the body is read (docs/slack.md#request-limits): an
   * unsigned request, a timestamp out of the window, a signature that cannot be one, or a body
   * declared larger than the limit is refused at once; a chunked body is read only up to it.
   * The one exception is Slack's unsigned SSL check: an unsigned form is read up to
   * MAX_UNSIGNED_BODY_BYTES to see whether it is one.
   */
  async #admit(req: IncomingMessage, res: ServerResponse): Promise<Admitted | undefined> {
    const headers = {
      signature: header(req, 'x-slack-signature'),
      timestamp: header(req, 'x-slack-request-timestamp'),
    };
    const nowSeconds = this.#options.nowSeconds?.() ?? Math.floor(Date.now() / 1000);
    const early = headerProblem(headers, nowSeconds);
    const contentType = header(req, 'content-type');
    const maybeSslCheck = early === 'no_signature' && isForm(contentType);
    if (early && !maybeSslCheck) return void this.#refuse(res, 401, early);

    const limit = early ? MAX_UNSIGNED_BODY_BYTES : MAX_BODY_BYTES;
    const tooLarge = (declared: number | undefined) =>
      early
        ? this.#refuse(res, 401, early)
        : this.#refuse(res, 413, 'body_too_large', { declared, limit: MAX_BODY_BYTES });
    const declared = declaredLength(req);
    if (declared !== undefined && declared > limit) return void tooLarge(declared);
    const read = await readBody(req, limit);
    if (read.kind === 'too_large') return void tooLarge(declared);
    if (read.kind === 'cut_off') {
      // Node has answered 408 (too slow) or the client left: there is nobody to answer.
      this.#options.logger.warn({ reason: 'body_not_received' }, 'request dropped: its body did not arrive');
      return undefined;
    }
    const text = read.body.toString('utf8');
    const form = isForm(contentType) ? parseQuery(text) : undefined;
    // Slack's SSL check carries nothing to act on.
    if (form?.ssl_check === '1') {
      res.writeHead(200).end();
      return undefined;
    }
    const problem = signatureProblem(this.#options.signingSecret, headers, text, nowSeconds);
    if (problem) return void this.#refuse(res, 401, problem);
    return { text, form };
  }

  readonly handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const { logger } = this.#options;
    const admitted = await this.#admit(req, res);
    if (admitted === undefined) return;
    const refuse = (status: number, reason: string) => this.#refuse(res, status, reason);

    let body: unknown;
    try {
      body = parseBody(admitted);
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
