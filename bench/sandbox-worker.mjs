// The sandbox payment service on its own thread, so its latency stays what it is told to be
// while the benchmark's main thread is busy generating load. Imports the built sandbox
// (npm run bench builds first), so the worker needs no TypeScript loader.
import { parentPort } from 'node:worker_threads';
import { startSandbox } from '../dist/sandbox/server.js';

const sandbox = await startSandbox();
parentPort.postMessage({ type: 'ready', url: sandbox.url, apiKey: sandbox.apiKey, payUrl: sandbox.payUrl });
parentPort.on('message', async (command) => {
  if (command.type === 'latency') sandbox.setLatency(command.ms);
  if (command.type === 'reset') sandbox.reset();
  if (command.type === 'close') await sandbox.close();
  parentPort.postMessage({ type: 'done', id: command.id, count: sandbox.requests.length });
  if (command.type === 'close') parentPort.close();
});
