import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { stringify } from 'lossless-json';
import {
  DEMO_API_KEY,
  DEMO_BALANCES,
  demoInvoices,
  type WireBalanceEntry,
  type WireInvoice,
} from './data.js';

/**
 * A local payment service that speaks the two documented calls and the two documented errors
 * (docs/payment-api.md), for demos and tests. Tests can make chosen requests fail.
 */

/** How one request should misbehave instead of being answered normally. */
type Fault =
  /** Answer this status and body (default: a JSON error object). */
  | { kind: 'status'; status: number; body?: string; headers?: Record<string, string> }
  /** Accept the request and never answer. */
  | { kind: 'hang' }
  /** Destroy the connection without an answer. */
  | { kind: 'reset' }
  /** A 200 HTML page, as a captive portal or a misrouted proxy would send. */
  | { kind: 'html' }
  /** Answer normally, after a delay. */
  | { kind: 'slow'; ms: number };

export interface SandboxOptions {
  port?: number;
  host?: string;
  apiKey?: string;
  /** Delay before every answer, to imitate a real network. */
  latencyMs?: number;
  balances?: readonly WireBalanceEntry[];
  /** Invoices; by default the demo ones, with links to this sandbox's own `/pay/<id>` page. */
  invoices?: (payUrl: string) => readonly WireInvoice[];
  /** The `{pay_url}` of payment links; defaults to the sandbox's own address. */
  payUrl?: string;
}

interface RecordedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  userAgent: string | undefined;
  accept: string | undefined;
}

export interface Sandbox {
  readonly url: string;
  readonly payUrl: string;
  readonly apiKey: string;
  readonly invoices: readonly WireInvoice[];
  /** Every API request received, in order. */
  readonly requests: RecordedRequest[];
  /** Make the next `times` API requests misbehave (queued after any already queued). */
  failNext(fault: Fault, times?: number): void;
  setLatency(ms: number): void;
  /** Forget recorded requests and queued faults. */
  reset(): void;
  close(): Promise<void>;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(stringify(body));
};

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const apiKey = options.apiKey ?? DEMO_API_KEY;
  const balances = options.balances ?? DEMO_BALANCES;
  let latencyMs = options.latencyMs ?? 0;
  let faults: Fault[] = [];
  let invoices = new Map<string, WireInvoice>();
  const requests: RecordedRequest[] = [];

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://sandbox').pathname;
    if (req.method === 'GET' && path === '/healthz') return void res.end('ok');
    const pay = /^\/pay\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && pay) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return void res.end(
        '<!doctype html><title>Sandbox payment page</title><p>This is where the customer would pay.',
      );
    }

    requests.push({
      method: req.method ?? '',
      path,
      authorization: req.headers.authorization,
      userAgent: req.headers['user-agent'],
      accept: req.headers.accept,
    });
    const fault = faults.shift();
    if (fault?.kind === 'hang') return;
    if (fault?.kind === 'reset') return void req.socket.destroy();
    const delay = latencyMs + (fault?.kind === 'slow' ? fault.ms : 0);
    if (delay > 0) await sleep(delay);
    if (fault?.kind === 'html') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return void res.end('<html><body><h1>Welcome to nginx!</h1></body></html>');
    }
    if (fault?.kind === 'status') {
      res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
      return void res.end(
        fault.body ??
          JSON.stringify({ status: fault.status, name: 'Error', message: 'sandbox fault', details: {} }),
      );
    }

    // Both calls need the key (docs/payment-api.md#invoice-auth): stricter than the document
    // promises, so a wrong PAYMENT_API_KEY shows up on the first call of either kind.
    const isApi = path === '/api/v2/balance' || path.startsWith('/api/v2/invoice/');
    if (req.method === 'GET' && isApi && req.headers.authorization !== `Token ${apiKey}`) {
      return json(res, 401, {
        status: 401,
        name: 'UnauthorizedError',
        message: 'shop not found',
        details: 'check api key',
      });
    }
    if (req.method === 'GET' && path === '/api/v2/balance') {
      return json(res, 200, { status: 'success', result: balances });
    }
    const invoice = /^\/api\/v2\/invoice\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && invoice?.[1] !== undefined) {
      const found = invoices.get(invoice[1].toLowerCase());
      if (!found)
        return json(res, 400, {
          status: 400,
          name: 'BadRequestError',
          message: 'no any invoice',
          details: {},
        });
      return json(res, 200, found); // no status wrapper, as documented
    }
    return json(res, 404, { status: 404, name: 'NotFoundError', message: 'not found', details: {} });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      res.destroy(error instanceof Error ? error : undefined);
    });
  });
  server.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const url = `http://${options.host ?? '127.0.0.1'}:${port}`;
  const payUrl = options.payUrl ?? url;
  const invoiceList = (options.invoices ?? demoInvoices)(payUrl);
  invoices = new Map(invoiceList.map((i) => [i.id.toLowerCase(), i]));

  return {
    url,
    payUrl,
    apiKey,
    invoices: invoiceList,
    requests,
    failNext(fault, times = 1) {
      for (let i = 0; i < times; i += 1) faults.push(fault);
    },
    setLatency(ms) {
      latencyMs = ms;
    },
    reset() {
      requests.length = 0;
      faults = [];
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
