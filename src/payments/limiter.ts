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
  readonly #waiting: (() => void)[] = [];

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
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running += 1;
    }
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running -= 1;
    }
  }
}
