import type { App, ReceiverEvent } from '@slack/bolt';
import { createHttpServer, type HttpServer, type Routes } from '../../src/http/server.js';
import { SlackHttpReceiver } from '../../src/http/slack-receiver.js';
import { boltLogger, type Logger } from '../../src/logger.js';

/**
 * The bot's HTTP server with Slack's endpoint (and `routes` besides) on a free loopback port: a
 * request signed with `secret` at `nowSeconds` reaches `onEvent` as Bolt would receive it.
 */
export async function receiverServer(opts: {
  secret: string;
  nowSeconds: number;
  logger: Logger;
  onEvent: (event: ReceiverEvent) => Promise<void>;
  routes?: Routes;
}): Promise<{ server: HttpServer; port: number }> {
  const receiver = new SlackHttpReceiver({
    signingSecret: opts.secret,
    logger: opts.logger,
    boltLogger: boltLogger(opts.logger),
    nowSeconds: () => opts.nowSeconds,
  });
  receiver.init({ processEvent: opts.onEvent } as unknown as App);
  const server = createHttpServer({ 'POST /slack/events': receiver.handle, ...opts.routes }, opts.logger);
  return { server, port: await server.listen(0, '127.0.0.1') };
}
