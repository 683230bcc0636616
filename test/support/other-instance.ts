/** A write by another instance of the bot, on a connection of its own to the same SQLite file. */
export async function writeAsOtherInstance(
  path: string,
  statement: string,
  ...values: unknown[]
): Promise<void> {
  const { default: Database } = await import('libsql');
  const other = new Database(path);
  try {
    other.prepare(statement).run(...values);
  } finally {
    other.close();
  }
}
