import { inject } from 'vitest';
import { openStore } from '../../src/store/database.js';
import { paidInvoicesContract } from '../support/paid-invoices-contract.js';
import { freshDatabase } from '../support/postgres-server.js';

const server = inject('postgresUrl');

paidInvoicesContract('PostgreSQL', async () =>
  openStore({ kind: 'postgres', url: await freshDatabase(server) }),
);
