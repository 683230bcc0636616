import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse as parseJson, stringify } from 'lossless-json';
import {
  DEMO_API_KEY,
  DEMO_BALANCES,
  demoInvoices,
  type WireBalanceEntry,
  type WireInvoice,
} from './data.js';
import { coinOf, credited, PAID, type Payment } from './payment.js';

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
  /** When it arrived (milliseconds since the epoch), for calls per key per second. */
  at: number;
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
  /** Changes an invoice's fields as given (`payStatus`, `status`, …); the balance stays as it is. */
  updateInvoice(id: string, patch: Partial<WireInvoice>): void;
  /**
   * A customer pays the invoice, as the real service would record it: paid and closed, and its
   * amount added to the balance of the coin it was paid in (src/sandbox/payment.ts). Throws, saying
   * why, when the invoice cannot be paid.
   */
  payInvoice(id: string): Payment;
  /** Makes an invoice unknown, as if it had been deleted. */
  removeInvoice(id: string): void;
  /** The invoices as they stand now, after updates and removals. */
  readonly current: readonly WireInvoice[];
  /**
   * Another merchant of the service, reached with its own key: its own balance and invoices,
   * which no other key reads (many-workspaces mode's tests).
   */
  addMerchant(
    apiKey: string,
    data: { balances: readonly WireBalanceEntry[]; invoices: readonly WireInvoice[] },
  ): void;
  /** Changes one of a merchant's invoices (`updateInvoice` for another key); the main key's too. */
  updateMerchantInvoice(apiKey: string, id: string, patch: Partial<WireInvoice>): void;
  /** Replaces the balance, as payments and withdrawals would. */
  setBalances(balances: readonly WireBalanceEntry[]): void;
  /** The balance as it stands. */
  readonly balances: readonly WireBalanceEntry[];
  /** Forget queued faults: the service answers normally again. */
  clearFaults(): void;
  /** Forget recorded requests and queued faults; invoices and balances are as they started. */
  reset(): void;
  close(): Promise<void>;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(stringify(body));
};

/** A merchant's balance and invoices, read at each request. */
interface Merchant {
  balances: () => readonly WireBalanceEntry[];
  invoices: () => Map<string, WireInvoice>;
}

/** The sandbox as it stands: its data, the requests it received and the faults it is to play. */
interface State {
  balances: readonly WireBalanceEntry[];
  latencyMs: number;
  faults: Fault[];
  invoices: Map<string, WireInvoice>;
  requests: RecordedRequest[];
  /** Every merchant by its `Authorization` header: the main one's data changes through the controls. */
  merchants: Map<string, Merchant>;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const apiKey = options.apiKey ?? DEMO_API_KEY;
  const state: State = {
    balances: options.balances ?? DEMO_BALANCES,
    latencyMs: options.latencyMs ?? 0,
    faults: [],
    invoices: new Map<string, WireInvoice>(),
    requests: [],
    merchants: new Map(),
  };
  state.merchants.set(`Token ${apiKey}`, { balances: () => state.balances, invoices: () => state.invoices });

  const server = createServer((req, res) => {
    handle(state, req, res).catch((error: unknown) => {
      res.destroy(error instanceof Error ? error : undefined);
    });
  });
  server.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const url = `http://${options.host ?? '127.0.0.1'}:${port}`;
  const payUrl = options.payUrl ?? url;
  const invoiceList = (options.invoices ?? demoInvoices)(payUrl);
  state.invoices = new Map(invoiceList.map((i) => [i.id.toLowerCase(), i]));
  return sandboxOf(state, server, { url, payUrl, apiKey, invoices: invoiceList }, options);
}

/** Applies a patch to one of the main merchant's invoices; false when it has no such invoice. */
function updateInvoice(state: State, id: string, patch: Partial<WireInvoice>): boolean {
  const found = state.invoices.get(id.toLowerCase());
  if (found) state.invoices.set(found.id.toLowerCase(), { ...found, ...patch, id: found.id });
  return found !== undefined;
}

/** Pays one of the main merchant's invoices (`Sandbox.payInvoice`); a string says why it cannot. */
function payInvoice(state: State, id: string): Payment | string {
  const found = state.invoices.get(id.toLowerCase());
  if (!found) return `the sandbox has no invoice ${id}`;
  const coin = coinOf(found);
  if (coin === undefined)
    return `invoice ${found.id} cannot be paid here: it is ${found.status}, payment ${found.payStatus}, priced in ${found.currency} with methods ${found.methods.join(', ') || 'none'}`;
  const payment = { coin, amount: found.amount.toString() };
  updateInvoice(state, id, PAID);
  state.balances = credited(state.balances, payment);
  return payment;
}

/**
 * Demo controls (not part of the service's API): `POST /sandbox/invoices/<id>/pay` (the customer
 * pays: the invoice is paid and its amount arrives in the balance), `POST /sandbox/invoices/<id>`
 * with a JSON patch such as `{"status":"expired"}`, and `POST /sandbox/balances` with the new
 * balance entries, so watches and the feed can be tried by hand.
 */
async function admin(state: State, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  let body: unknown;
  try {
    body = parseJson(raw || '{}');
  } catch {
    return json(res, 400, { message: 'the body is not JSON' });
  }
  const paid = /^\/sandbox\/invoices\/([^/]+)\/pay$/.exec(path)?.[1];
  if (paid) {
    const payment = payInvoice(state, paid);
    return typeof payment === 'string' ? json(res, 409, { message: payment }) : json(res, 200, payment);
  }
  const invoice = /^\/sandbox\/invoices\/([^/]+)$/.exec(path)?.[1];
  if (invoice && body && typeof body === 'object' && !Array.isArray(body)) {
    return updateInvoice(state, invoice, body as Partial<WireInvoice>)
      ? json(res, 200, state.invoices.get(invoice.toLowerCase()))
      : json(res, 404, { message: 'no such invoice' });
  }
  if (path === '/sandbox/balances' && Array.isArray(body)) {
    state.balances = body as WireBalanceEntry[];
    return json(res, 200, { status: 'success', result: state.balances });
  }
  return json(res, 400, {
    message:
      'POST /sandbox/invoices/<id>/pay, POST /sandbox/invoices/<id> {patch} or POST /sandbox/balances [entries]',
  });
}

/** Answers one request: the service's two calls, the payment page, the demo controls, or a queued fault. */
async function handle(state: State, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://sandbox').pathname;
  if (req.method === 'GET' && path === '/healthz') return void res.end('ok');
  if (req.method === 'POST' && path.startsWith('/sandbox/')) return admin(state, req, res, path);
  const pay = /^\/pay\/([^/]+)$/.exec(path);
  if (req.method === 'GET' && pay) {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    return void res.end(
      '<!doctype html><title>Sandbox payment page</title><p>This is where the customer would pay.',
    );
  }

  state.requests.push({
    method: req.method ?? '',
    path,
    authorization: req.headers.authorization,
    userAgent: req.headers['user-agent'],
    accept: req.headers.accept,
    at: Date.now(),
  });
  const fault = state.faults.shift();
  if (fault?.kind === 'hang') return;
  if (fault?.kind === 'reset') return void req.socket.destroy();
  const delay = state.latencyMs + (fault?.kind === 'slow' ? fault.ms : 0);
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
  const merchant = state.merchants.get(req.headers.authorization ?? '');
  if (req.method === 'GET' && isApi && !merchant) {
    return json(res, 401, {
      status: 401,
      name: 'UnauthorizedError',
      message: 'shop not found',
      details: 'check api key',
    });
  }
  if (req.method === 'GET' && path === '/api/v2/balance' && merchant) {
    return json(res, 200, { status: 'success', result: merchant.balances() });
  }
  const invoice = /^\/api\/v2\/invoice\/([^/]+)$/.exec(path);
  if (req.method === 'GET' && invoice?.[1] !== undefined && merchant) {
    const found = merchant.invoices().get(invoice[1].toLowerCase());
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

/**
 * The sandbox as tests and demos see it: its address and data, and the controls that change its
 * merchants, their invoices and balances, its latency and the faults to play.
 */
function sandboxOf(
  state: State,
  server: Server,
  started: Pick<Sandbox, 'url' | 'payUrl' | 'apiKey' | 'invoices'>,
  options: SandboxOptions,
): Sandbox {
  return {
    ...started,
    requests: state.requests,
    addMerchant(key, data) {
      const own = new Map(data.invoices.map((i) => [i.id.toLowerCase(), i]));
      state.merchants.set(`Token ${key}`, { balances: () => data.balances, invoices: () => own });
    },
    updateMerchantInvoice(key, id, patch) {
      const own = state.merchants.get(`Token ${key}`)?.invoices();
      const found = own?.get(id.toLowerCase());
      if (!own || !found) throw new Error(`the sandbox has no invoice ${id} for that key`);
      own.set(id.toLowerCase(), { ...found, ...patch, id: found.id });
    },
    failNext(fault, times = 1) {
      for (let i = 0; i < times; i += 1) state.faults.push(fault);
    },
    setLatency(ms) {
      state.latencyMs = ms;
    },
    updateInvoice(id, patch) {
      if (!updateInvoice(state, id, patch)) throw new Error(`the sandbox has no invoice ${id}`);
    },
    payInvoice(id) {
      const payment = payInvoice(state, id);
      if (typeof payment === 'string') throw new Error(payment);
      return payment;
    },
    removeInvoice(id) {
      state.invoices.delete(id.toLowerCase());
    },
    get current() {
      return [...state.invoices.values()];
    },
    setBalances(next) {
      state.balances = next;
    },
    get balances() {
      return state.balances;
    },
    clearFaults() {
      state.faults = [];
    },
    reset() {
      state.requests.length = 0;
      state.faults = [];
      state.invoices = new Map(started.invoices.map((i) => [i.id.toLowerCase(), i]));
      state.balances = options.balances ?? DEMO_BALANCES;
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
