import { afterEach, describe, expect, it } from 'vitest';
import { createHttpServer, type HttpServer, ListenError } from '../../src/http/server.js';
import { captureLogs } from '../support/bolt.js';

/**
 * A port the bot cannot listen on is the operator's to fix: the error names the setting that
 * chose it (PORT, METRICS_PORT) or HOST, and what to do, instead of Node's bare EADDRINUSE.
 */

const servers: HttpServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const server = () => {
  const made = createHttpServer({}, captureLogs().logger);
  servers.push(made);
  return made;
};

describe('listening where it cannot', () => {
  it('names PORT and what to do when the port is taken', async () => {
    const port = await server().listen(0, '127.0.0.1');
    const error = await server()
      .listen(port, '127.0.0.1')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ListenError);
    expect((error as Error).message).toBe(
      `PORT ${port} is already in use on 127.0.0.1: stop whatever listens there, or set PORT to a free port`,
    );
    expect((error as Error).cause).toMatchObject({ code: 'EADDRINUSE' });
  });

  it('names METRICS_PORT when that is the setting that chose the port', async () => {
    const port = await server().listen(0, undefined);
    await expect(server().listen(port, undefined, 'METRICS_PORT')).rejects.toThrow(
      `METRICS_PORT ${port} is already in use: stop whatever listens there, or set METRICS_PORT to a free port`,
    );
  });

  it('names HOST when it is no address of this machine', async () => {
    await expect(server().listen(0, '192.0.2.1')).rejects.toThrow(
      'HOST 192.0.2.1 is not an address of this machine: set HOST to one of its addresses, or unset it to listen on all',
    );
  });
});
