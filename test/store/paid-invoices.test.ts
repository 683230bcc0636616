import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { openStore } from '../../src/store/database.js';
import { paidInvoicesContract } from '../support/paid-invoices-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'bot-paid-invoices-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
paidInvoicesContract('SQLite', async () => {
  n += 1;
  return openStore({ kind: 'sqlite', path: join(dir, `${n}.sqlite`) });
});
