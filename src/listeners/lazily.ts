/** How each property of a `T` is made, given the object it is made for (to read its other properties). */
type Makers<T> = { readonly [K in keyof T]: (self: T) => T[K] };

/**
 * An object whose properties are each made the first time they are read, then kept as plain
 * values: a request or a check builds only what it uses (one handler, not every handler; the
 * watches, not the feed). Made per request or check, it is garbage once that ends.
 */
export function lazily<T extends object>(makers: Makers<T>): T {
  const self = {} as T;
  for (const key of Object.keys(makers) as (keyof T & string)[]) {
    Object.defineProperty(self, key, {
      configurable: true,
      enumerable: true,
      get() {
        const value = makers[key](self);
        Object.defineProperty(self, key, { value, enumerable: true });
        return value;
      },
    });
  }
  return self;
}
