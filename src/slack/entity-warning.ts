/** Where the warning is logged (the installation's logger). */
interface Warns {
  warn(fields: object, message: string): void;
}

/**
 * Where Work Objects are off (an app made from an older manifest, a workspace that drops them),
 * Slack still posts the card and answers `ok: true` with a warning such as
 * `invalid_metadata_format` (docs/slack.md#work-objects). This reads it from a Web API answer.
 */
function metadataWarning(answer: unknown): string | undefined {
  const { warning, response_metadata: meta } = (answer ?? {}) as {
    warning?: unknown;
    response_metadata?: { warnings?: unknown };
  };
  const warnings = [warning, ...(Array.isArray(meta?.warnings) ? meta.warnings : [])];
  return warnings.find((w): w is string => typeof w === 'string' && w.includes('metadata'));
}

/**
 * Logs that Slack dropped a card's Work Object, once per installation (an hour: `firstSight`,
 * shared by every instance): the card itself went out as before.
 */
export async function noteDroppedEntity(
  firstSight: (key: string) => Promise<boolean>,
  logger: Warns,
  method: string,
  answer: unknown,
): Promise<void> {
  const warning = metadataWarning(answer);
  if (warning === undefined || !(await firstSight('work-objects-off'))) return;
  logger.warn(
    { method, warning },
    'Slack dropped the Work Object of a card (Work Objects are off for this app or workspace): cards go out without it',
  );
}
