/** How each property of a `T` is made, given the object it is made for (to read its other properties). */
type Makers<T> = { readonly [K in keyof T]: (self: T) => T[K] };

const MAKERS = Symbol('makers');
const MADE = Symbol('made');

interface Lazy {
  [MAKERS]: Record<string, (self: unknown) => unknown>;
  [MADE]: Record<string, unknown>;
}

/** One prototype per set of property names: its getters make each property once, then return it. */
const prototypes = new Map<string, object>();

function prototypeOf(keys: readonly string[]): object {
  const name = keys.join('\n');
  let proto = prototypes.get(name);
  if (proto) return proto;
  proto = {};
  for (const key of keys) {
    Object.defineProperty(proto, key, {
      enumerable: true,
      get(this: Lazy) {
        const made = this[MADE];
        if (key in made) return made[key];
        const value = this[MAKERS][key]?.(this);
        made[key] = value;
        return value;
      },
    });
  }
  prototypes.set(name, proto);
  return proto;
}

/**
 * An object whose properties are each made the first time they are read, then kept: a request
 * or a check builds only what it uses (one handler, not every handler; the watches, not the
 * feed). Made per request or check, it is garbage once that ends. The getters live on a
 * prototype shared by every object of the same property names, so making one is cheap.
 */
export function lazily<T extends object>(makers: Makers<T>): T {
  const self = Object.create(prototypeOf(Object.keys(makers))) as Lazy;
  self[MAKERS] = makers as unknown as Lazy[typeof MAKERS];
  self[MADE] = {};
  return self as unknown as T;
}
