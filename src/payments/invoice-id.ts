/** An invoice id known to be 8-4-4-4-12 lower-case hexadecimal: safe to put in a URL path. */
export type InvoiceId = string & { readonly __brand: 'InvoiceId' };

// Any version and variant: the document only says "UUID", and ids the service made are what count.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The id in lower case, or `undefined` when `text` is not exactly an id (no trimming here). */
export function parseInvoiceId(text: string): InvoiceId | undefined {
  return UUID.test(text) ? (text.toLowerCase() as InvoiceId) : undefined;
}
