import Big from 'big.js';

/** The grammar of a JSON number (RFC 8259 §6), which is also what the service may send as text. */
const DECIMAL = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * Longest amount accepted, in characters of plain notation. A balance needs a few dozen digits at
 * most; anything longer is a broken answer, and expanding `1e999999999` would exhaust memory.
 */
export const MAX_AMOUNT_LENGTH = 200;

/**
 * An exact decimal amount, never a JS `number`.
 *
 * `toString()` gives the digits exactly as the service sent them (`1.50` stays `1.50`, integers
 * above 2^53 keep every digit); exponent notation such as `1e-7` is expanded to plain notation
 * (`0.0000001`) because people read amounts, not floats. Comparisons go through big.js, so
 * they are exact too.
 */
export class Amount {
  readonly #value: Big;
  readonly #text: string;

  private constructor(value: Big, text: string) {
    this.#value = value;
    this.#text = text;
  }

  /** Parses a decimal in JSON number syntax; `undefined` when it is not one or is absurdly long. */
  static parse(raw: string): Amount | undefined {
    if (raw.length > MAX_AMOUNT_LENGTH || !DECIMAL.test(raw)) return undefined;
    const exponentAt = raw.search(/[eE]/);
    // Bound the expansion before big.js performs it: the plain form is about |exponent| + digits long.
    if (exponentAt !== -1 && Math.abs(Number(raw.slice(exponentAt + 1))) + exponentAt > MAX_AMOUNT_LENGTH) {
      return undefined;
    }
    const value = new Big(raw);
    const text = exponentAt === -1 ? raw : value.toFixed();
    // A signed zero is still nothing: `-0.00` reads as `0.00` (its one minus sign is its first character).
    return new Amount(value, value.eq(0) ? text.replace('-', '') : text);
  }

  /** A result of arithmetic, in plain notation (big.js writes no sign on a zero). */
  static #of(value: Big): Amount {
    return new Amount(value, value.toFixed());
  }

  static readonly ZERO = Amount.#of(new Big(0));

  isZero(): boolean {
    return this.#value.eq(0);
  }

  /** `this - other`, exactly. */
  minus(other: Amount): Amount {
    return Amount.#of(this.#value.minus(other.#value));
  }

  /** `this + other`, exactly. */
  plus(other: Amount): Amount {
    return Amount.#of(this.#value.plus(other.#value));
  }

  /** -1, 0 or 1. */
  sign(): -1 | 0 | 1 {
    return this.#value.eq(0) ? 0 : this.#value.gt(0) ? 1 : -1;
  }

  /** The amount without its sign. */
  abs(): Amount {
    return this.sign() < 0 ? Amount.#of(this.#value.abs()) : this;
  }

  /** Same value (`1.50` equals `1.5`). */
  equals(other: Amount): boolean {
    return this.#value.eq(other.#value);
  }

  toString(): string {
    return this.#text;
  }
}
