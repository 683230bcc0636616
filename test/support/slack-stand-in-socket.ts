import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { type WebSocket, WebSocketServer } from 'ws';
import { blockKitProblems } from './block-kit.js';
import type { SlackStandIn } from './slack-stand-in.js';
import { arrive, waiter } from './slack-stand-in-state.js';

/**
 * The Slack stand-in's Socket Mode server (slack-stand-in.ts), on `server` at /socket-mode: it
 * says `hello` to the bot, sends envelopes, and records the bot's acks, checking any message they
 * carry against Block Kit's limits into `problems`.
 */
export function socketModeServer(
  server: Server,
  problems: string[],
): SlackStandIn['socket'] & { close(): void } {
  const wss = new WebSocketServer({ server, path: '/socket-mode' });
  let socket: WebSocket | undefined;
  const connections: WebSocket[] = [];
  const acks: { envelope_id: string; payload?: unknown; at: number }[] = [];
  wss.on('connection', (ws) => {
    socket = ws;
    arrive(connections, ws);
    ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as { envelope_id: string; payload?: unknown };
      arrive(acks, { ...message, at: Date.now() });
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

  return {
    async connected(timeoutMs = 15_000) {
      await waiter(connections, (ws) => ws === socket, 'a Socket Mode connection', timeoutMs);
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
    close() {
      for (const client of wss.clients) client.terminate();
      wss.close();
    },
  };
}
