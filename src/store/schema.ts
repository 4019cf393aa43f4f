import type { Generated } from 'kysely';
import type { CargoStatus } from '../domain/statuses.js';

/**
 * Table types. Times are epoch milliseconds (bigint in PostgreSQL, integer in SQLite); flags are
 * 0/1 integers and JSON is stored as text, so both databases take and return the same values
 * (better-sqlite3 cannot bind booleans, and jsonb would reorder metadata keys the API echoes).
 */
export interface Schema {
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
  cargo: CargoTable;
  results: ResultsTable;
  rate_limit_windows: RateLimitWindowsTable;
}

export interface ProjectsTable {
  id: string;
  slug: string;
  is_active: number;
  rate_limit_max: number | null;
  created_at: number;
  updated_at: number;
}

export interface ApiKeysTable {
  id: string;
  project_id: string;
  name: string;
  key_prefix: string;
  key_hash: string;
  is_active: number;
  expires_at: number | null;
  last_used_at: number | null;
  created_at: number;
}

export interface CargoTable {
  id: string;
  project_id: string;
  status: CargoStatus;
  /** The model id as submitted, and where routing sent it. */
  model: string;
  provider: string;
  provider_model: string;
  /** JSON: `{requests: [{recordId?, modelInput}]}`, one entry per provider request. */
  request: string;
  request_count: number;
  request_bytes: number;
  /** JSON text of the submitted metadata, or null. */
  metadata: string | null;
  result_ttl_seconds: number;
  callback_url: string | null;
  /** JSON of the `callback` object (object-store delivery), or null. */
  callback: string | null;
  created_at: number;
  updated_at: number;
}

export interface ResultsTable {
  cargo_id: string;
  success: number;
  /** JSON of the model message (or records list); null on failure and once purged. */
  response: string | null;
  error_message: string | null;
  created_at: number;
  expires_at: number;
  purged_at: number | null;
}

export interface RateLimitWindowsTable {
  key: string;
  window_start: number;
  hits: Generated<number>;
}
