import { inject } from 'vitest';
import { openStore } from '../../src/store/database.js';
import { installationLifecycleContract } from '../support/installation-lifecycle-contract.js';
import { installationsContract } from '../support/installations-contract.js';
import { freshDatabase } from '../support/postgres-server.js';

const server = inject('postgresUrl');

installationsContract('PostgreSQL', async () =>
  openStore({ kind: 'postgres', url: await freshDatabase(server) }),
);

installationLifecycleContract('PostgreSQL', async () =>
  openStore({ kind: 'postgres', url: await freshDatabase(server) }),
);
