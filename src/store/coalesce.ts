/**
 * Many callers' writes as one statement: each `add` waits, with whatever else arrives meanwhile,
 * for one `flush` of them all (group commit). A batch goes when `ready` says every caller that
 * could still join has joined, or `windowMs` after its first item, or at `max` items; while one
 * batch is being written the next one gathers, so under load a statement carries many items and
 * when idle an item waits no longer than one turn of the event loop.
 */
export interface CoalesceOptions<I, R> {
  /** The statement: resolves with each item's result, in the items' order. */
  flush: (items: readonly I[]) => Promise<readonly R[]>;
  /** How long the first item of a batch waits for others at most (ms). */
  windowMs: number;
  /** The most items in one statement. */
  max: number;
  /** True when no other caller could join the waiting ones now (say, every running item has): the batch goes at once. */
  ready?: (waiting: number) => boolean;
}

interface Waiting<I, R> {
  item: I;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

export function coalesce<I, R>(options: CoalesceOptions<I, R>): (item: I) => Promise<R> {
  const { flush, windowMs, max, ready = () => false } = options;
  const waiting: Waiting<I, R>[] = [];
  let timer: NodeJS.Timeout | undefined;
  let writing = false;

  async function write(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    if (writing || waiting.length === 0) return;
    writing = true;
    const batch = waiting.splice(0, max);
    try {
      const results = await flush(batch.map((w) => w.item));
      batch.forEach((w, i) => {
        w.resolve(results[i] as R);
      });
    } catch (error) {
      for (const w of batch) w.reject(error);
    } finally {
      writing = false;
      // What gathered meanwhile goes now if it may, else when its window ends.
      if (waiting.length > 0) schedule();
    }
  }

  function schedule(): void {
    if (writing) return;
    if (waiting.length >= max || ready(waiting.length)) {
      // After the current turn: callers finishing in the same turn still join.
      setImmediate(() => void write());
      return;
    }
    timer ??= setTimeout(() => void write(), windowMs);
  }

  return (item) =>
    new Promise<R>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      schedule();
    });
}
