/**
 * Which database errors mean a reference broke under a concurrent write, as opposed to a bug:
 * PostgreSQL's foreign_key_violation (SQLSTATE 23503). A photo references its animal
 * (migration 0007), so a photo stored while its animal is removed meets one on either side.
 * SQLite does not enforce references here (no `foreign_keys` pragma) and serialises writes.
 */
export function isForeignKeyViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23503';
}
