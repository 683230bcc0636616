/**
 * Work the demo does in the bot's store between two runs of the bot (src/demo/main.ts). SQLite is
 * for one process and the bot holds the file while it runs (src/store/lock.ts), so the demo asks
 * the bot to stop, does its work in the store, and starts the bot again; the bot's scheduler
 * then finds what is due at once, as after any restart.
 */

interface Asked {
  work: () => Promise<unknown>;
  settle: (error?: unknown) => void;
}

export class BotPauses {
  #asked: Asked[] = [];
  /** Works done while the bot was stopped, settled once it is back. */
  #done: { settle: Asked['settle']; error?: unknown }[] = [];

  /** @param stopBot stops the running bot (its runner then calls `runBetween`). */
  constructor(private readonly stopBot: () => Promise<void>) {}

  /** Runs `work` with the bot stopped; settles once the bot is back (or the demo stops). */
  pause(work: () => Promise<unknown>): Promise<void> {
    const back = new Promise<void>((resolve, reject) => {
      this.#asked.push({ work, settle: (error) => (error === undefined ? resolve() : reject(error)) });
    });
    void this.stopBot();
    return back;
  }

  /** Whether the bot was stopped to do work in between, rather than stopped for good. */
  get asked(): boolean {
    return this.#asked.length > 0;
  }

  /** Called by the runner with the bot stopped: does the works asked for. */
  async runBetween(): Promise<void> {
    const asked = this.#asked;
    this.#asked = [];
    for (const { work, settle } of asked) {
      try {
        await work();
        this.#done.push({ settle });
      } catch (error) {
        this.#done.push({ settle, error });
      }
    }
  }

  /** Called by the runner once the bot is back: the works done are settled. */
  resumed(): void {
    const done = this.#done;
    this.#done = [];
    for (const { settle, error } of done) settle(error);
  }

  /** The demo stops: every work asked for and not yet settled fails with `error`. */
  abandon(error: Error): void {
    const left = [...this.#done, ...this.#asked];
    this.#done = [];
    this.#asked = [];
    for (const { settle } of left) settle(error);
  }
}
