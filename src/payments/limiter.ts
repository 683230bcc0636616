/** A place in the queue was refused: too many calls are already waiting. */
export class QueueFullError extends Error {
  override readonly name = 'QueueFullError';
}

/**
 * At most `concurrency` calls at once; the rest wait in order, up to `maxQueue` of them. A call
 * gets its deadline only once it runs, so a healthy but slow service is never reported as timed
 * out because others were ahead in the queue.
 */
export class Limiter {
  #running = 0;
  readonly #waiting: { resolve: () => void; reject: (error: Error) => void }[] = [];

  constructor(
    readonly concurrency: number,
    readonly maxQueue: number,
  ) {}

  get queued(): number {
    return this.#waiting.length;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#running >= this.concurrency) {
      if (this.#waiting.length >= this.maxQueue)
        throw new QueueFullError('the payment service queue is full');
      await new Promise<void>((resolve, reject) => this.#waiting.push({ resolve, reject }));
    } else {
      this.#running += 1;
    }
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next) next.resolve();
      else this.#running -= 1;
    }
  }

  /** Every call still waiting for its turn fails with `error` now, its work never started. */
  releaseWaiting(error: Error): void {
    for (const waiter of this.#waiting.splice(0)) waiter.reject(error);
  }
}
