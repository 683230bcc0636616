// The sandbox payment service on its own thread, so its latency stays what it is told to be
// while the benchmark's main thread is busy generating load. Imports the built sandbox
// (npm run bench builds first), so the worker needs no TypeScript loader.
//
// It serves 1,000 distinct invoices: real /invoice traffic asks for different ids, so the
// benchmark must not let identical requests coalesce where real ones would not. With
// `workerData.watched = n` it also serves n invoices with ids 00000000-0000-4000-8000-<n>,
// far from expiry, for the watch scenario. The tenants scenario adds merchants (one key each,
// with invoices of its own made the same way), changes their invoices, and reads when each call
// came with which key.
import { randomUUID } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { demoInvoices } from '../dist/sandbox/data.js';
import { startSandbox } from '../dist/sandbox/server.js';

const INVOICES = 1000;
const WATCHED = workerData?.watched ?? 0;
export const watchedId = (i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

const sandbox = await startSandbox({
  invoices: (payUrl) => {
    const templates = demoInvoices(payUrl);
    const distinct = Array.from({ length: INVOICES }, (_, i) => {
      const id = randomUUID();
      const template = templates[i % templates.length];
      return { ...template, id, link: `${payUrl}/pay/${id}` };
    });
    const watched = Array.from({ length: WATCHED }, (_, i) => {
      const id = watchedId(i);
      return { ...templates[0], id, link: `${payUrl}/pay/${id}`, timeout: '2099-01-01T00:00:00.000Z' };
    });
    return [...distinct, ...watched];
  },
});
parentPort.postMessage({
  type: 'ready',
  url: sandbox.url,
  apiKey: sandbox.apiKey,
  payUrl: sandbox.payUrl,
  invoiceIds: sandbox.invoices.slice(0, INVOICES).map((invoice) => invoice.id),
});
/** A merchant's invoice: the first demo invoice under another id, far from expiry. */
const merchantInvoice = (id) => ({
  ...demoInvoices(sandbox.payUrl)[0],
  id,
  link: `${sandbox.payUrl}/pay/${id}`,
  timeout: '2099-01-01T00:00:00.000Z',
});
parentPort.on('message', async (command) => {
  if (command.type === 'latency') sandbox.setLatency(command.ms);
  if (command.type === 'merchants') {
    for (const { apiKey, invoiceIds } of command.merchants)
      sandbox.addMerchant(apiKey, { balances: [], invoices: invoiceIds.map(merchantInvoice) });
  }
  if (command.type === 'update')
    sandbox.updateMerchantInvoice(command.apiKey, command.invoiceId, command.patch);
  if (command.type === 'calls') {
    // When each call whose path starts with `prefix` came, and with which Authorization header.
    const calls = sandbox.requests
      .filter((r) => r.path.startsWith(command.prefix ?? ''))
      .map((r) => [r.at, r.authorization ?? '']);
    parentPort.postMessage({ type: 'done', id: command.id, count: calls.length, calls });
    return;
  }
  if (command.type === 'reset') sandbox.requests.length = 0;
  if (command.type === 'close') await sandbox.close();
  const count = command.prefix
    ? sandbox.requests.filter((r) => r.path.startsWith(command.prefix)).length
    : sandbox.requests.length;
  parentPort.postMessage({ type: 'done', id: command.id, count });
  if (command.type === 'close') parentPort.close();
});
