import type { App, AppOptions } from '@slack/bolt';
import type { Routes } from '../http/server.js';
import type { HandlersOf, MoreRoutes } from '../listeners/index.js';
import type { InstallationSummary } from '../store/installations.js';
import type { InstallationId } from '../store/keys.js';
import type { Tenant } from './tenant.js';

/**
 * Where a request's or a job's installation comes from; everything else is built once by the
 * assembly (src/app.ts). The one workspace is a fixed installation built from the environment at
 * start (./one.ts); many workspaces read the installation store (./many.ts).
 */
export interface Tenancy {
  /** How Bolt knows a request's installation: the one bot token, or `authorize` from the store. */
  readonly app: Pick<AppOptions, 'token' | 'botId' | 'botUserId' | 'authorize'>;
  /** HTTP routes beside Slack's requests (Add to Slack's install pages). */
  readonly routes: Routes;
  /** Requests that are no installation's own work (the payment account, the install's lifecycle). */
  readonly more: MoreRoutes;
  /** The handlers of a request's installation, from the context Bolt's authorization filled. */
  handlersOf: HandlersOf;
  /**
   * An installation's part for background work, by id; undefined while it cannot be served
   * (uninstalled, its token revoked, the store failing just then): its work waits. `known` is
   * its summary as the caller just read it (one read of many installations): given, the tenancy
   * does not read it again.
   */
  partOf(installation: InstallationId, known?: InstallationSummary): Promise<Tenant | undefined>;
  /**
   * Many workspaces: the summaries of a claim's installations, in one read, for `partOf` (one
   * not stored is missing). The one workspace has none to read.
   */
  summariesOf?(
    installations: readonly InstallationId[],
  ): Promise<ReadonlyMap<InstallationId, InstallationSummary>>;
  /**
   * Each key's background calls per second, all instances together, when its budget is kept in
   * the store (many workspaces); unset when each instance keeps its own (one workspace).
   */
  readonly perSecond?: number;
  /** Told once Bolt's app exists (many workspaces trim the clients Bolt keeps). */
  bind?(app: App): void;
  /** The start's log line's fields. */
  readonly started: Record<string, unknown>;
  /** Told once the bot has started (one workspace checks its payment key). */
  afterStart?(): void;
}
