import { inject } from 'vitest';
import { openStore } from '../../src/store/database.js';
import { freshDatabase } from '../support/postgres-server.js';
import { statesSeenContract } from '../support/states-seen-contract.js';

const server = inject('postgresUrl');

statesSeenContract('PostgreSQL', async () =>
  openStore({ kind: 'postgres', url: await freshDatabase(server) }),
);
