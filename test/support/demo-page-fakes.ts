import { request } from 'node:http';
import type { DemoSlack } from '../../src/demo/slack.js';
import type { ClickPlace, DemoMessage, DemoModal } from '../../src/demo/workspace.js';

/**
 * A stand-in for the demo's Slack behind the demo page's server (src/demo/server.ts): the
 * messages and App Home the page shows are set by the test, and what the person does is recorded.
 */
export interface FakeSlack extends DemoSlack {
  messages: DemoMessage[];
  home: unknown[] | undefined;
  modal: DemoModal | undefined;
  ready: boolean;
  flexpane: DemoSlack['flexpane'];
  /** Each call the page made, in order: [method, ...arguments]. */
  readonly calls: unknown[][];
  /** What the next call throws, once. */
  failNext: Error | undefined;
  /** Tells the page something changed, as the real one does after every change. */
  change(): void;
}

export function fakeSlack(): FakeSlack {
  const listeners = new Set<() => void>();
  const calls: unknown[][] = [];
  const slack: FakeSlack = {
    apiUrl: 'http://127.0.0.1:1/api/',
    botToken: 'xoxb-fake',
    signingSecret: 'secret',
    messages: [],
    home: undefined,
    ready: false,
    calls,
    failNext: undefined,
    connect: () => {},
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    change: () => {
      for (const listener of listeners) listener();
    },
    say: async (text: string) => record('say', text),
    click: async (place: ClickPlace, blockId: string, actionId: string) =>
      record('click', place, blockId, actionId),
    shortcut: async (ts: string) => record('shortcut', ts),
    openHome: async () => record('openHome'),
    modal: undefined,
    submitModal: async (typed) => record('submitModal', typed),
    closeModal: () => record('closeModal'),
    flexpane: undefined,
    openEntity: async (ts: string, refId: string, url: string) => record('openEntity', ts, refId, url),
    panelClick: async (actionId: string) => record('panelClick', actionId),
    closePanel: () => record('closePanel'),
    close: async () => {},
  };
  function record(...call: unknown[]): void {
    const failure = slack.failNext;
    slack.failNext = undefined;
    if (failure) throw failure;
    calls.push(call);
  }
  return slack;
}

/** A message as the demo's workspace stores it; `ts` and `user` at least. */
export const message = (m: Partial<DemoMessage> & Pick<DemoMessage, 'ts' | 'user'>): DemoMessage => ({
  threadTs: undefined,
  text: '',
  blocks: [],
  ephemeral: false,
  command: false,
  edited: false,
  metadata: undefined,
  unfurls: [],
  ...m,
});

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * A request as a browser (or anything else) may send it: the Host header and the content type
 * exactly as given, or left out (`undefined`).
 */
export function rawRequest(
  pageUrl: string,
  options: { method?: string; path: string; host?: string | undefined; contentType?: string; body?: string },
): Promise<RawAnswer> {
  const url = new URL(pageUrl);
  const headers: Record<string, string> = {};
  if (options.host !== undefined) headers.host = options.host;
  if (options.contentType !== undefined) headers['content-type'] = options.contentType;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port,
        method: options.method ?? 'GET',
        path: options.path,
        headers,
        setHost: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}
