import { isLosslessNumber, type LosslessNumber } from 'lossless-json';
import { z } from 'zod';
import { Amount } from './amount.js';

/**
 * The service's answers (docs/payment-api.md). Bodies are parsed with lossless-json, so
 * every JSON number arrives here as a `LosslessNumber` holding the digits that were sent.
 *
 * Open by design: extra fields are dropped, and `status`, `payStatus`, currency and method ids
 * are plain strings, because the document lists only the values it has seen.
 */

const jsonNumber = z.custom<LosslessNumber>(isLosslessNumber);

/** A number (or, leniently, a numeric string) kept exact. */
const amount = z.union([jsonNumber.transform((n) => n.value), z.string()]).transform((text, ctx) => {
  const parsed = Amount.parse(text);
  if (parsed === undefined) {
    ctx.issues.push({ code: 'custom', message: 'not a decimal number', input: text });
    return z.NEVER;
  }
  return parsed;
});

/** ISO 8601 with `Z` or an offset, as an instant. */
const instant = z.iso.datetime({ offset: true }).transform((text) => new Date(text));

/** A URL field that may be missing or null ("null when not set"). Not checked here: views decide. */
const optionalUrl = z
  .string()
  .nullish()
  .transform((url) => url || null);

const balanceEntrySchema = z.object({
  id: z.string(),
  title: z.string(),
  balance: amount,
});

export const balanceResponseSchema = z.object({
  result: z.array(balanceEntrySchema),
});

export const invoiceSchema = z.object({
  id: z.string(),
  payStatus: z.string(),
  createdAt: instant,
  amount,
  currency: z.string(),
  feeByClient: z.boolean(),
  sendToEmail: z.boolean(),
  timeout: instant,
  status: z.string(),
  title: z.string(),
  link: z.string(),
  methods: z.array(z.string()),
  fee: amount,
  shop: z.object({
    title: z.string(),
    failUrl: optionalUrl,
    successUrl: optionalUrl,
  }),
});

/** The error object (docs/payment-api.md#errors). Every field optional: an error answer is mapped even when it is malformed. */
export const errorBodySchema = z.object({
  name: z.string().optional().catch(undefined),
  message: z.string().optional().catch(undefined),
});

export type BalanceEntry = z.infer<typeof balanceEntrySchema>;
export type Invoice = z.infer<typeof invoiceSchema>;
