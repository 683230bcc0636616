import type { ServerResponse } from 'node:http';
import type { App } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import type { HttpServer } from '../src/http/server.js';
import { Inflight } from '../src/inflight.js';
import { lifecycle } from '../src/lifecycle.js';
import type { Scheduler } from '../src/scheduler.js';

/** What /healthz answers now. */
function health(life: ReturnType<typeof lifecycle>) {
  const answer = { status: 0, body: '' };
  const res = {
    writeHead(status: number) {
      answer.status = status;
      return res;
    },
    end(body: string) {
      answer.body = body;
    },
  };
  life.healthz({} as never, res as unknown as ServerResponse);
  return answer;
}

function parts(calls: string[]) {
  const server: HttpServer = {
    listen: async () => {
      calls.push('listen');
      return 4321;
    },
    close: async () => void calls.push('close'),
    closeAll: () => void calls.push('closeAll'),
  };
  const app = {
    start: async () => void calls.push('app.start'),
    stop: async () => void calls.push('app.stop'),
  } as unknown as App;
  const scheduler: Scheduler = {
    start: () => void calls.push('scheduler.start'),
    wake: () => undefined,
    stop: async () => void calls.push('scheduler.stop'),
  };
  return {
    server,
    app,
    scheduler,
    inflight: new Inflight(),
    http: { port: 0, host: undefined },
    started: (port: number) => void calls.push(`started ${port}`),
  };
}

describe('the bot’s life, as /healthz tells it', () => {
  it('is not healthy before it starts, healthy once started, and not once stopped', async () => {
    const calls: string[] = [];
    const life = lifecycle();
    const bot = life.bot(parts(calls));
    expect(health(life)).toEqual({ status: 503, body: '{"ok":false}' });
    expect(await bot.start()).toEqual({ port: 4321 });
    expect(health(life)).toEqual({ status: 200, body: '{"ok":true}' });
    expect(await bot.stop(100)).toEqual({ drained: true });
    expect(health(life)).toEqual({ status: 503, body: '{"ok":false}' });
  });

  it('starts Bolt itself when told no other way', async () => {
    const calls: string[] = [];
    const bot = lifecycle().bot(parts(calls));
    await bot.start();
    expect(calls).toEqual(['listen', 'scheduler.start', 'app.start', 'started 4321']);
  });
});

describe('while Bolt is still starting (Socket Mode connecting)', () => {
  it('answers /healthz 200 once listening and runs background work meanwhile: the connection may take retries', async () => {
    const calls: string[] = [];
    const life = lifecycle();
    let connect: () => void = () => undefined;
    const bot = life.bot({
      ...parts(calls),
      startApp: () => new Promise<void>((resolve) => (connect = resolve)),
    });
    const starting = bot.start();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(calls).toEqual(['listen', 'scheduler.start']);
    expect(health(life)).toEqual({ status: 200, body: '{"ok":true}' });
    connect();
    await starting;
    expect(calls).toEqual(['listen', 'scheduler.start', 'started 4321']);
  });

  it('is cut short by a stop: the bot is never said started, its background work stops, and the stop does not wait for a connection', async () => {
    const calls: string[] = [];
    const life = lifecycle();
    const bot = life.bot({
      ...parts(calls),
      startApp: (stopped) =>
        new Promise<void>((resolve) => stopped.addEventListener('abort', () => resolve())),
    });
    const starting = bot.start();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await bot.stop(100)).toEqual({ drained: true });
    expect(await starting).toEqual({ port: 4321 });
    expect(calls).not.toContain('started 4321');
    expect(calls.indexOf('scheduler.stop')).toBeGreaterThan(calls.indexOf('scheduler.start'));
    expect(health(life)).toEqual({ status: 503, body: '{"ok":false}' });
  });
});
