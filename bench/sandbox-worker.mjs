// The sandbox payment service on its own thread, so its latency stays what it is told to be
// while the benchmark's main thread is busy generating load. Imports the built sandbox
// (npm run bench builds first), so the worker needs no TypeScript loader.
//
// It serves 1,000 distinct invoices: real /invoice traffic asks for different ids, so the
// benchmark must not let identical requests coalesce where real ones would not.
import { randomUUID } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import { demoInvoices } from '../dist/sandbox/data.js';
import { startSandbox } from '../dist/sandbox/server.js';

const INVOICES = 1000;
const sandbox = await startSandbox({
  invoices: (payUrl) => {
    const templates = demoInvoices(payUrl);
    return Array.from({ length: INVOICES }, (_, i) => {
      const id = randomUUID();
      const template = templates[i % templates.length];
      return { ...template, id, link: `${payUrl}/pay/${id}` };
    });
  },
});
parentPort.postMessage({
  type: 'ready',
  url: sandbox.url,
  apiKey: sandbox.apiKey,
  payUrl: sandbox.payUrl,
  invoiceIds: sandbox.invoices.map((invoice) => invoice.id),
});
parentPort.on('message', async (command) => {
  if (command.type === 'latency') sandbox.setLatency(command.ms);
  if (command.type === 'reset') sandbox.reset();
  if (command.type === 'close') await sandbox.close();
  parentPort.postMessage({ type: 'done', id: command.id, count: sandbox.requests.length });
  if (command.type === 'close') parentPort.close();
});
