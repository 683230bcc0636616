export const REDACTED = '[REDACTED]';

/**
 * A function that replaces every occurrence of the given secrets with `[REDACTED]`.
 * Empty secrets are ignored; longer secrets are replaced first so one that contains another
 * is not left half-visible.
 */
export function createRedactor(secrets: readonly (string | undefined)[]): (text: string) => string {
  const present = [...new Set(secrets.filter((s): s is string => Boolean(s)))].sort(
    (a, b) => b.length - a.length,
  );
  if (present.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const secret of present) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    }
    return out;
  };
}
