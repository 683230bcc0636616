import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/**
 * A throwaway PostgreSQL server on loopback for the tests and the benchmark, started by the
 * project itself: Debian's `postgresql` package is installed when it is missing and we are root
 * (as on CI), then `initdb` makes a cluster in a temporary directory and `pg_ctl` starts it on a
 * free port with trust authentication. `TEST_DATABASE_URL` points at an existing server instead.
 */

export interface PostgresServer {
  /** The server's `postgres` database, for making one database per test file. */
  readonly url: string;
  stop(): void;
}

const isRoot = () => process.getuid?.() === 0;

function binDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

function install(): void {
  if (!isRoot()) {
    throw new Error(
      'PostgreSQL is not installed and this is not root: install Debian’s postgresql package, or set TEST_DATABASE_URL to a server the tests may create databases on',
    );
  }
  console.log('installing PostgreSQL from Debian’s packages for the tests …');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = spawnSync('apt-get', ['update', '-qq'], { env, stdio: 'inherit' });
  const result = spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'postgresql'], {
    env,
    stdio: 'inherit',
  });
  if (update.status !== 0 || result.status !== 0) throw new Error('apt-get install postgresql failed');
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

export async function startPostgres(): Promise<PostgresServer> {
  const existing = process.env.TEST_DATABASE_URL;
  if (existing) return { url: existing, stop: () => undefined };

  let bin = binDir();
  if (!bin) {
    install();
    bin = binDir();
    if (!bin) throw new Error('PostgreSQL was installed but initdb is not under /usr/lib/postgresql');
  }
  const dir = mkdtempSync(join(tmpdir(), 'bot-pg-'));
  const data = join(dir, 'data');
  // initdb and the server refuse to run as root: as root they run as the `postgres` user.
  const asServer = (command: string, args: string[]) =>
    isRoot() ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  if (isRoot()) execFileSync('chown', ['postgres:postgres', dir]);
  const run = (command: string, args: string[]) => {
    const [file, argv] = asServer(join(bin, command), args) as [string, string[]];
    execFileSync(file, argv, { stdio: 'pipe' });
  };
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  run('pg_ctl', [
    '-D',
    data,
    '-l',
    join(dir, 'server.log'),
    '-w',
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`,
    'start',
  ]);
  let stopped = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
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
