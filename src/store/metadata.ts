/**
 * A cargo's metadata as its readers select it: a provider-compatible batch's cargo keeps it in
 * `compat_cargo` (migration 025: apart from the request text, which on SQLite sits before it in
 * `cargo_requests`), every other cargo in `cargo_requests`. Joined as `m` and `q`.
 */
import { sql } from 'kysely';

export const metadataOf = sql<string | null>`coalesce(m.metadata, q.metadata)`.as('metadata');
