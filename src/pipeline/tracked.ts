import type { Inflight } from '../inflight.js';
import type { Logger } from '../logger.js';
import type { InstallationId } from '../store/keys.js';
import type { Delivery, Outcome } from './outcome.js';

/** The kinds of work the bot does: Slack's requests, and its own scheduled jobs. */
export type Kind = 'command' | 'action' | 'event' | 'shortcut' | 'view' | 'function' | 'job';

/** Who a request came from and where, as Slack said. */
export interface Who {
  /** Many workspaces: the installation the work belongs to. */
  installation?: InstallationId | undefined;
  user?: string | undefined;
  team?: string | undefined;
  channel?: string | undefined;
}

/** What a handler returns: how its work ended, for the one request log line. */
export interface Tracked {
  outcome: Outcome;
  delivery?: Delivery;
  invoiceId?: string | undefined;
  /** Figures worth a field of their own in the log line (e.g. how many links were unfurled). */
  counts?: Readonly<Record<string, number>>;
  /** Routine background work that changed nothing: its line is written at debug, not info. */
  quiet?: boolean;
}

/** Where each piece of work is counted and timed: `Metrics` (src/metrics.ts) is one. */
export interface RequestMeter {
  /** `installation`: many workspaces, whose work it was, when the work itself says (a job's item). */
  request(kind: Kind, name: string, outcome: Outcome, seconds: number, installation?: InstallationId): void;
}

export interface TrackingDeps {
  logger: Logger;
  inflight: Inflight;
  /** Counts and times every piece of work (src/metrics.ts). */
  metrics?: RequestMeter;
}

/**
 * The one wrapper every listener runs in: it keeps the work in flight (so a graceful stop waits
 * for it), times it, turns a throw into an `internal_error` outcome instead of a crash, and
 * writes one log line with who asked, what, the outcome and the latency.
 */
export function tracked<A>(
  deps: TrackingDeps,
  kind: Kind,
  name: string,
  who: (args: A) => Who,
  handle: (args: A) => Promise<Tracked>,
): (args: A) => Promise<void> {
  return (args) =>
    deps.inflight.run(async () => {
      const startedAt = performance.now();
      let result: Tracked;
      try {
        result = await handle(args);
      } catch (error) {
        deps.logger.error({ err: error, kind, name }, `${kind} ${name} failed`);
        result = { outcome: 'internal_error' };
      }
      const { counts, quiet, ...fields } = result;
      const ms = performance.now() - startedAt;
      const asked = who(args);
      deps.metrics?.request(kind, name, result.outcome, ms / 1000, asked.installation);
      const level = quiet ? 'debug' : 'info';
      // A quiet check's line is most of them, and not written at the usual level: not built either.
      if (deps.logger.isLevelEnabled(level))
        deps.logger[level](
          { kind, name, ...asked, ...fields, ...counts, ms: Math.round(ms) },
          `${kind} ${name}`,
        );
    });
}
