export const REDACTED = '[REDACTED]';

/** A string as it appears inside a JSON string literal. */
const jsonEscaped = (s: string) => JSON.stringify(s).slice(1, -1);

/**
 * Every spelling of a secret a log line or an answer can hold: as is, escaped once (inside a
 * JSON body, or a log line's JSON) and escaped twice (a JSON body quoted inside a log line).
 * A key holding `"` or `\` is spelled differently in each.
 */
function spellings(secret: string): string[] {
  const once = jsonEscaped(secret);
  return [secret, once, jsonEscaped(once)];
}

/**
 * A function that replaces every spelling of the given secrets with `[REDACTED]`. Empty secrets
 * are ignored; longer spellings are replaced first so one that contains another is not left
 * half-visible.
 */
export function createRedactor(secrets: readonly (string | undefined)[]): (text: string) => string {
  const present = [...new Set(secrets.filter((s): s is string => Boolean(s)).flatMap(spellings))].sort(
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
