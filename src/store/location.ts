/** Where the bot keeps its state: a SQLite file (one instance), or PostgreSQL (several). */
export type DatabaseLocation =
  | { kind: 'sqlite'; path: string }
  /** `poolSize`: connections each instance keeps at most (DATABASE_POOL_SIZE, 10 by default). */
  | { kind: 'postgres'; url: string; poolSize?: number };

/** PostgreSQL connections an instance keeps at most, unless DATABASE_POOL_SIZE says otherwise. */
export const DEFAULT_POOL_SIZE = 10;
