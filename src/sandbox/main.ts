import { z } from 'zod';
import { startSandbox } from './server.js';

/** `npm run sandbox`: a local payment service to try the bot without a merchant account. */

/** Unset and empty mean the same, as for the bot's own settings. */
const digits = (what: string, max: number) =>
  z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .string()
      .regex(/^\d+$/, `must be ${what} (digits only)`)
      .transform(Number)
      .refine((n) => n <= max, `must be ${what} from 0 to ${max}`)
      .optional(),
  );

const settings = z
  .object({
    SANDBOX_PORT: digits('a port number', 65535).default(4010),
    SANDBOX_LATENCY_MS: digits('milliseconds', 60_000).default(0),
  })
  .safeParse(process.env);
if (!settings.success) {
  console.error(settings.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n'));
  process.exit(1);
}

const sandbox = await startSandbox({
  port: settings.data.SANDBOX_PORT,
  latencyMs: settings.data.SANDBOX_LATENCY_MS,
});

// Before the banner: whoever reads "Ctrl-C stops it" may stop it at once.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void sandbox.close().then(() => process.exit(0));
  });
}

console.log(`Sandbox payment service listening on ${sandbox.url}

Point the bot at it (in .env):
  PAYMENT_API_URL=${sandbox.url}
  PAYMENT_API_KEY=${sandbox.apiKey}
  PAYMENT_PAY_URL=${sandbox.payUrl}

Demo invoices:
${sandbox.invoices.map((i) => `  /invoice ${i.id}   (${i.status}/${i.payStatus}: ${i.title})`).join('\n')}

Ctrl-C stops it.`);
