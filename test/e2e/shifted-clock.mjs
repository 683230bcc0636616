// Preloaded with `node --import` into a bot the end-to-end tests start: this process's wall clock
// (Date.now and new Date()) runs CLOCK_SHIFT_MS ahead, as on a machine whose clock is off. Its
// monotonic clock (performance.now) is left alone, as a real machine's is.
const shift = Number(process.env.CLOCK_SHIFT_MS ?? 0);
const RealDate = Date;
const realNow = RealDate.now.bind(RealDate);
class ShiftedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(realNow() + shift);
    else super(...args);
  }
  static now() {
    return realNow() + shift;
  }
}
globalThis.Date = ShiftedDate;
