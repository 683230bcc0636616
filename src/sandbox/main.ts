import { startSandbox } from './server.js';

/** `npm run sandbox`: a local payment service to try the bot without a merchant account. */

const port = Number(process.env.SANDBOX_PORT ?? 4010);
const latencyMs = Number(process.env.SANDBOX_LATENCY_MS ?? 0);
const sandbox = await startSandbox({ port, latencyMs });

console.log(`Sandbox payment service listening on ${sandbox.url}

Point the bot at it (in .env):
  PAYMENT_API_URL=${sandbox.url}
  PAYMENT_API_KEY=${sandbox.apiKey}
  PAYMENT_PAY_URL=${sandbox.payUrl}

Demo invoices:
${sandbox.invoices.map((i) => `  /invoice ${i.id}   (${i.status}/${i.payStatus}: ${i.title})`).join('\n')}

Ctrl-C stops it.`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void sandbox.close().then(() => process.exit(0));
  });
}
