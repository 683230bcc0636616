import { Pool } from 'undici';
import { FairSlots, quietReserve } from './fair-slots.js';

/**
 * The process's connections to the payment service, for every client (every key) of its origin:
 * one keep-alive pool for people's calls and one for background work, each with its slots
 * (`FairSlots`), one per connection, shared fairly by the keys. A call takes a slot before it
 * asks its pool, so it never waits inside the pool with its deadline running.
 */
interface ConnectionsOptions {
  /** The service's `{base_url}`: its origin is what the pools connect to. */
  apiUrl: string;
  /** PAYMENT_API_TIMEOUT_MS: the pools' own bounds on waiting for headers and for the body. */
  timeoutMs: number;
  /** PAYMENT_API_CONCURRENCY: people's calls at once, all keys together. */
  concurrency: number;
  /** Background calls at once, all keys together (`connections`) and of one key (`perKey`). */
  background: { connections: number; perKey: number };
  /**
   * Many keys share the connections (many-workspaces mode): `quietReserve` of people's slots are
   * kept for keys with no call under way, so a person of a workspace that asks once never waits
   * for another workspace's burst to end. With one key there is nothing to keep them for, and
   * background work, which no person waits for, takes its turns without a reserve.
   */
  manyKeys: boolean;
}

export interface Connections {
  /** A client's `dispatcher` and `slots`. */
  readonly interactive: { readonly dispatcher: Pool; readonly slots: FairSlots };
  /** A client's `background`, but for its `pace`. */
  readonly background: { readonly dispatcher: Pool; readonly slots: FairSlots; readonly concurrency: number };
  /** Closes both pools once their calls are done (a clean stop). */
  close(): Promise<void>;
  /** Closes both pools now, failing their calls. */
  destroy(): Promise<void>;
}

export function openConnections(options: ConnectionsOptions): Connections {
  const origin = new URL(options.apiUrl).origin;
  const poolOptions = {
    keepAliveTimeout: 30_000,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  };
  const { concurrency } = options;
  const { connections, perKey } = options.background;
  const pool = new Pool(origin, { ...poolOptions, connections: concurrency });
  const backgroundPool = new Pool(origin, { ...poolOptions, connections });
  return {
    interactive: {
      dispatcher: pool,
      slots: new FairSlots({ slots: concurrency, reserve: options.manyKeys ? quietReserve(concurrency) : 0 }),
    },
    background: {
      dispatcher: backgroundPool,
      slots: new FairSlots({ slots: connections }),
      concurrency: perKey,
    },
    close: async () => {
      await Promise.all([pool.close(), backgroundPool.close()]);
    },
    destroy: async () => {
      await Promise.all([pool.destroy(), backgroundPool.destroy()]);
    },
  };
}
