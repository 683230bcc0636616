import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { InstallationId } from './keys.js';
import type { Tables } from './schema.js';

/** A value of an inserted row, with the column type PostgreSQL is told (a bare parameter in a SELECT would be text). */
type Typed = string | number | { null: 'bigint' | 'text' };

const typed = (value: Typed): RawBuilder<unknown> => {
  if (typeof value === 'string') return sql`cast(${value} as text)`;
  if (typeof value === 'number') return sql`cast(${value} as bigint)`;
  return value.null === 'text' ? sql`cast(null as text)` : sql`cast(null as bigint)`;
};

/**
 * The row `values` for an insert of an installation's own (`INSERT … SELECT`), selected only
 * while the installation is stored: a call still in flight when it is uninstalled inserts
 * nothing, where `VALUES` would re-create what the uninstall just deleted (issue 37). The check
 * and the write are one statement, so no uninstall can fall between them.
 */
export function whileInstalled(db: Kysely<Tables>, installation: InstallationId, ...values: Typed[]) {
  return db
    .selectFrom('installations')
    .select(values.map((value, i) => typed(value).as(`v${i}`)))
    .where('installations.id', '=', installation);
}
