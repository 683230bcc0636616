import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import type { Store } from '../../src/store/database.js';

/**
 * Holds back the result of the next statement `matches` picks until released: the work that made
 * it (and its transaction) is then paused right after that statement, for a test to act between.
 * `matches` is given the statement's node as JSON.
 */
export class PauseAfter implements KyselyPlugin {
  private armed = false;
  private readonly held = new WeakSet<object>();
  private arrived = () => {};
  private gate = Promise.resolve();
  /** Resolves once the statement has been made and its result is held back. */
  reached = Promise.resolve();

  constructor(private readonly matches: (node: RootOperationNode, text: string) => boolean) {}

  /** Holds back the next matching statement; resolves with what lets it go on. */
  arm(): () => void {
    let release = () => {};
    this.armed = true;
    this.reached = new Promise((resolve) => {
      this.arrived = resolve;
    });
    this.gate = new Promise((resolve) => {
      release = resolve;
    });
    return () => release();
  }

  transformQuery({ node, queryId }: PluginTransformQueryArgs): RootOperationNode {
    if (this.armed && this.matches(node, JSON.stringify(node))) {
      this.armed = false;
      this.held.add(queryId);
    }
    return node;
  }

  async transformResult({ queryId, result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.held.has(queryId)) {
      this.arrived();
      await this.gate;
    }
    return result;
  }
}

/** A PostgreSQL store as one instance sees it, its statements watched by `pause`. */
export const pausable = (store: Store, pause: PauseAfter): Store => ({
  ...store,
  db: store.db.withPlugin(pause),
  transaction: (work) => store.db.withPlugin(pause).transaction().execute(work),
});
