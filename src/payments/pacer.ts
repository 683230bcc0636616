/**
 * A budget of calls per second, shared by everything that takes from it: each `take()` resolves
 * at the next free slot, slots `1000 / perSecond` ms apart. No burst: background work is smooth
 * by design, and interactive calls never take from it.
 */
export class Pacer {
  #nextSlot = 0;
  readonly #intervalMs: number;

  constructor(
    perSecond: number,
    private readonly now: () => number = () => performance.now(),
    private readonly wait: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {
    this.#intervalMs = 1000 / perSecond;
  }

  /**
   * Resolves at the next free slot: true, or false when `deadline` ended first (no slot is taken
   * once it has ended). Bound, so it can be handed over as a payments client's `background.pace`.
   */
  readonly take = async (deadline?: AbortSignal): Promise<boolean> => {
    if (deadline?.aborted) return false;
    const now = this.now();
    const slot = Math.max(now, this.#nextSlot);
    this.#nextSlot = slot + this.#intervalMs;
    if (slot > now) await this.wait(slot - now);
    return !deadline?.aborted;
  };
}
