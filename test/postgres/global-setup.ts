import type { TestProject } from 'vitest/node';
import { type PostgresServer, startPostgres } from '../support/postgres-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

let server: PostgresServer | undefined;

/** One PostgreSQL server for the run: the embedded one unless TEST_DATABASE_URL is set (test/support/postgres-server.ts). */
export async function setup(project: TestProject): Promise<void> {
  server = await startPostgres();
  project.provide('postgresUrl', server.url);
}

export async function teardown(): Promise<void> {
  await server?.stop();
}
