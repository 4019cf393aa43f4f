/**
 * Table types. Times are epoch milliseconds (bigint in PostgreSQL, integer in SQLite); flags are
 * 0/1 integers and JSON is stored as text, so both databases take and return the same values
 * (better-sqlite3 cannot bind booleans, and jsonb would reorder metadata keys the API echoes).
 */
import type { Generated } from 'kysely';
import type {
  BatchStatus,
  CargoStatus,
  ChannelName,
  CompatApiName,
  CompatBatchState,
  CompatFilePurpose,
  CompatFileState,
  ConnectionStatus,
  DeliveryStatus,
  OutboxStatus,
  RecoverableCargoStatus,
  RecoveryStatus,
} from '../domain/lifecycle.js';
import type { RealtimeRequestState } from '../domain/realtime-requests.js';

export interface Schema {
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
  admin_tokens: AdminTokensTable;
  admin_sessions: AdminSessionsTable;
  cargo: CargoTable;
  cargo_requests: CargoRequestsTable;
  results: ResultsTable;
  rate_limit_windows: RateLimitWindowsTable;
  batches: BatchesTable;
  record_results: RecordResultsTable;
  deliveries: DeliveriesTable;
  delivery_attempts: DeliveryAttemptsTable;
  connections: ConnectionsTable;
  outbox: OutboxTable;
  change_counters: ChangeCountersTable;
  project_storage: ProjectStorageTable;
  storage_changes: StorageChangesTable;
  idempotency_keys: IdempotencyKeysTable;
  project_spend: ProjectSpendTable;
  project_spend_days: ProjectSpendDaysTable;
  spend_changes: SpendChangesTable;
  budget_alerts: BudgetAlertsTable;
  compat_batches: CompatBatchesTable;
  compat_batch_requests: CompatBatchRequestsTable;
  compat_staged_cargo: CompatStagedCargoTable;
  compat_cargo: CompatCargoTable;
  compat_files: CompatFilesTable;
  compat_file_chunks: CompatFileChunksTable;
  recoveries: RecoveriesTable;
  realtime_requests: RealtimeRequestsTable;
  realtime_slots: RealtimeSlotsTable;
  usage_days: UsageDaysTable;
}

export interface ProjectsTable {
  id: string;
  slug: string;
  is_active: number;
  rate_limit_max: number | null;
  created_at: number;
  updated_at: number;
  webhook_secret: string | null;
  previous_webhook_secret: string | null;
  previous_webhook_secret_until: number | null;
  /** Where incident mail goes (a connection marked failed); null sends none. */
  notification_email: string | null;
  /** Storage budget (src/store/storage-usage.ts): bytes accepted per UTC day, bytes held; null: the default. */
  daily_byte_budget: number | null;
  held_byte_budget: number | null;
  /** JSON array of the model globs the project may use (migration 019); null: every model. */
  allowed_models: string | null;
  /** Spend budget: `default` (BARGE_DEFAULT_MONTHLY_BUDGET_USD), `none`, or `own` (the two below). */
  budget_mode: Generated<'default' | 'none' | 'own'>;
  monthly_budget_usd: number | null;
  daily_budget_usd: number | null;
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

/** Bearer tokens of the admin API (migration 020); only their SHA-256 is stored. */
export interface AdminTokensTable {
  id: string;
  name: string;
  /** The one project the token sees; null: every project. */
  project_id: string | null;
  token_prefix: string;
  token_hash: string;
  created_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
}

/** Dashboard sessions (migration 022); only the SHA-256 of a session id is stored. */
export interface AdminSessionsTable {
  id: string;
  session_hash: string;
  admin_token_id: string;
  created_at: number;
  last_seen_at: number;
  idle_expires_at: number;
  expires_at: number;
}

export interface CargoTable {
  id: string;
  project_id: string;
  status: CargoStatus;
  /** The model id as submitted, and where routing sent it. */
  model: string;
  provider: string;
  provider_model: string;
  request_count: number;
  /** 1 when the cargo was submitted with `records` (its result is a records list). */
  is_records: number;
  request_bytes: number;
  result_ttl_seconds: number;
  callback_url: string | null;
  /** JSON of the `callback` object (object-store delivery), or null. */
  callback: string | null;
  created_at: number;
  updated_at: number;
  batch_id: Generated<string | null>;
  /** The spend estimate reserved at submit, in nano-USD (store/spend-usage.ts). */
  reserved_nusd: Generated<number>;
}

/** What a cargo was sent with, written once: kept apart so status changes rewrite a narrow row. */
export interface CargoRequestsTable {
  cargo_id: string;
  /** JSON: `{requests: [{recordId?, modelInput}]}`, one entry per provider request. */
  request: string;
  /** JSON text of the submitted metadata, as the client wrote it, or null. */
  metadata: string | null;
}

/** A project's Idempotency-Key on POST /cargo/load: the body it came with and the cargo it made, for 24 hours. */
export interface IdempotencyKeysTable {
  project_id: string;
  key: string;
  /** SHA-256 hex of the request body as sent (decoded), to tell a retry from another request. */
  body_sha256: string;
  cargo_id: string;
  created_at: number;
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
  /** The cargo's project (copied for GET /usage; null only on rows older than migration 010). */
  project_id: string | null;
  /** Tokens the result used (summed over a records cargo's records); 0 on failure. */
  input_tokens: Generated<number>;
  output_tokens: Generated<number>;
  /** Prompt-cache writes (1-hour ones included), of them the 1-hour writes, and cache reads (migration 016). */
  cache_creation_input_tokens: Generated<number>;
  cache_creation_1h_input_tokens: Generated<number>;
  cache_read_input_tokens: Generated<number>;
  /** USD at the model's batch prices, and at its real-time prices; null when no price was known. */
  cost_usd: number | null;
  standard_cost_usd: number | null;
}

/** A project's usage on one UTC day with one model (migration 026): what GET /usage reports. */
export interface UsageDaysTable {
  project_id: string;
  /** Days since 1970-01-01 (UTC). */
  day: number;
  /** The model id the cargo were submitted with. */
  model: string;
  /** Cargo with a result that day (a canceled cargo's is not usage), and their provider requests. */
  cargo: number;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  /** Input tokens written to the prompt cache (5-minute and 1-hour writes), and read from it. */
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  /**
   * At the batch prices, and at the real-time prices: summed over the results whose price was
   * known; null while none was.
   */
  cost_usd: number | null;
  standard_cost_usd: number | null;
}

export interface RateLimitWindowsTable {
  key: string;
  window_start: number;
  hits: Generated<number>;
}

export type { BatchStatus, DeliveryStatus };

/** A provider batch job as a state row; short leased steps advance it. */
export interface BatchesTable {
  id: string;
  provider: string;
  provider_model: string;
  status: BatchStatus;
  job_id: string | null;
  /** What the provider adapter handed back between submit steps (opaque JSON text). */
  provider_state: string | null;
  /** The submit intent: when the first call that may create a job was made (see submitter.ts). */
  submit_started_at: number | null;
  cargo_count: number;
  request_count: number;
  padding_count: number;
  /** Tokens the padding requests used: the operator's cost, never on a project. */
  padding_input_tokens: Generated<number>;
  padding_output_tokens: Generated<number>;
  request_bytes: number;
  created_at: number;
  submitted_at: number | null;
  /** When the completion window closes: past it, the job is canceled and unfinished cargo expire. */
  deadline_at: number | null;
  /** When the submitter or the poller should look at this batch next. */
  next_check_at: number;
  poll_count: Generated<number>;
  canceled_at: number | null;
  ended_at: number | null;
  end_reason: string | null;
  locked_by: string | null;
  locked_until: number | null;
  attempts: Generated<number>;
  /** Failed tries the provider refused (rejected, auth): the batch fails on the third. */
  refusals: Generated<number>;
  last_error: string | null;
  updated_at: number;
}

export interface RecordResultsTable {
  cargo_id: string;
  record_index: number;
  success: number;
  /** JSON of `{recordId, success, response, error}`. */
  body: string;
  input_tokens: Generated<number>;
  output_tokens: Generated<number>;
  cache_creation_input_tokens: Generated<number>;
  cache_creation_1h_input_tokens: Generated<number>;
  cache_read_input_tokens: Generated<number>;
}

export type DeliveryChannelName = ChannelName;

/** One requested hand-over of a cargo's result on one channel, advanced by leased attempts. */
export interface DeliveriesTable {
  id: string;
  cargo_id: string;
  channel: DeliveryChannelName;
  status: DeliveryStatus;
  /** Attempts made so far; the schedule position lives here, never only in memory. */
  attempts: Generated<number>;
  next_attempt_at: number;
  locked_by: string | null;
  locked_until: number | null;
  last_error: string | null;
  last_status_code: number | null;
  /** `result` when a result was stored, `redeliver` when an operator asked again. */
  trigger: string;
  created_at: number;
  updated_at: number;
  ended_at: number | null;
}

export interface DeliveryAttemptsTable {
  id: string;
  delivery_id: string;
  attempt: number;
  trigger: string;
  started_at: number;
  duration_ms: number;
  status_code: number | null;
  /** e.g. `http_status`, `timeout`, `dns`, `connection_refused`, `blocked_address`, `target_not_found`. */
  error_class: string | null;
  error_detail: string | null;
  /** The first bytes of the receiver's response body. */
  response_excerpt: string | null;
}

/** A project's access to a customer's bucket (object delivery). */
export interface ConnectionsTable {
  id: string;
  project_id: string;
  /** The customer's role the service assumes; null for a static-credentials connection. */
  role_arn: string | null;
  /** Generated by the service; the customer's trust policy requires it. */
  external_id: string;
  /** JSON array of the target ARNs (buckets, queues, topics, event buses) deliveries may use; null allows any. */
  allowed_targets: string | null;
  /** An S3-compatible endpoint (MinIO, Ceph, R2); null uses the service's S3 endpoint. */
  endpoint_url: string | null;
  region: string | null;
  /** `{accessKeyId, secretAccessKey}` sealed with BARGE_SECRET_KEY (src/domain/secret-box.ts). */
  sealed_credentials: string | null;
  status: ConnectionStatus;
  last_failure_reason: string | null;
  last_failed_at: number | null;
  /** When the last capability check started (they are limited to one per minute). */
  last_check_at: number | null;
  created_at: number;
  updated_at: number;
}

/** A message that must go out at least once (incident mail), sent by the outbox loop with retries. */
export interface OutboxTable {
  id: string;
  kind: string;
  /** JSON of what to send, e.g. `{to, subject, text}`. */
  payload: string;
  status: OutboxStatus;
  attempts: Generated<number>;
  next_attempt_at: number;
  locked_by: string | null;
  locked_until: number | null;
  last_error: string | null;
  created_at: number;
  sent_at: number | null;
}

/** Counters bumped with a change other processes must notice (`auth`: keys and projects). */
export interface ChangeCountersTable {
  name: string;
  value: number;
}

/** What a project holds and has been accepted today, kept as counters (src/store/storage-usage.ts). */
export interface ProjectStorageTable {
  project_id: string;
  held_bytes: number;
  /** The UTC day (epoch ms of its midnight) `day_bytes` counts. */
  day: number;
  day_bytes: number;
}

/** Bytes results added (stored) or released (purged, negative), appended by triggers on `results`. */
export interface StorageChangesTable {
  project_id: string;
  bytes: number;
}

/** What a project's unfinished cargo reserve, in nano-USD (src/store/spend-usage.ts). */
export interface ProjectSpendTable {
  project_id: string;
  reserved_nusd: number;
}

/** What a project's results cost, per UTC day (epoch ms of its midnight), in nano-USD. */
export interface ProjectSpendDaysTable {
  project_id: string;
  day: number;
  spent_nusd: number;
}

/** A stored result's cost and the reservation it releases, appended by a trigger on `results`. */
export interface SpendChangesTable {
  project_id: string;
  day: number;
  spent_nusd: number;
  reserved_nusd: number;
}

/** A budget alert sent: once per project, period and threshold (percent). */
export interface BudgetAlertsTable {
  project_id: string;
  period: 'month' | 'day';
  starts: number;
  threshold: number;
  created_at: number;
}

/** A provider-compatible batch (migration 023): an Anthropic Message Batch or an OpenAI batch of a project. */
export interface CompatBatchesTable {
  id: string;
  project_id: string;
  api: CompatApiName;
  /** `creating` (invisible, staged), `open` (its cargo exist), `failed` (OpenAI lines refused), `ended`. */
  state: CompatBatchState;
  request_count: Generated<number>;
  created_at: number;
  /** When its cargo were created (the batch became visible). */
  in_progress_at: number | null;
  cancel_requested_at: number | null;
  /** 1 once every cargo a cancel could stop was canceled. */
  cancel_done: Generated<number>;
  /** When its last request ended (files made). */
  ended_at: number | null;
  failed_at: number | null;
  /** Its requests by outcome, moved by a trigger on `results` as each ends (migration 025). */
  succeeded: Generated<number>;
  errored: Generated<number>;
  canceled: Generated<number>;
  expired: Generated<number>;
  /** OpenAI: the input file, the create's metadata (JSON), the line errors of a failed batch (JSON), the files made at the end. */
  input_file_id: string | null;
  metadata: string | null;
  errors: string | null;
  output_file_id: string | null;
  error_file_id: string | null;
  /** When its latest result was stored (migration 025). */
  last_result_at: number | null;
  /** Set when its publish began: the batch is committed to, its cargo created a chunk at a time (migration 025). */
  publish_started_at: number | null;
  /** Set when it is deleted: hidden at once, its rows deleted in chunks (migration 025). */
  deleted_at: number | null;
  /** The lease of whoever creates the batch or makes its files. */
  locked_by: string | null;
  locked_until: number | null;
}

/** A cargo of a compat batch: its batch and its metadata, apart from the request text (migration 025). */
export interface CompatCargoTable {
  cargo_id: string;
  batch_id: string;
  metadata: string;
}

/** A request of a compat batch, in submission order: one cargo. */
export interface CompatBatchRequestsTable {
  batch_id: string;
  position: number;
  custom_id: string;
  cargo_id: string;
}

/** A cargo of a batch being created, until the batch's cargo are created in one transaction. */
export interface CompatStagedCargoTable {
  batch_id: string;
  position: number;
  cargo_id: string;
  model: string;
  provider: string;
  provider_model: string;
  request: string;
  request_bytes: number;
  metadata: string;
  reserved_nusd: number;
  created_at: number;
}

/** An OpenAI file of a project: an upload (`batch`) or a batch's output or error file (`batch_output`). */
export interface CompatFilesTable {
  id: string;
  project_id: string;
  purpose: CompatFilePurpose;
  filename: string;
  bytes: Generated<number>;
  state: CompatFileState;
  created_at: number;
  expires_at: number;
  /** While `writing`: past this, the sweeper deletes the unfinished file. */
  locked_until: number | null;
}

export interface CompatFileChunksTable {
  file_id: string;
  seq: number;
  data: Buffer;
}

/**
 * A bulk recovery (migration 021): redelivers a project's cargo created in [since, until) that were
 * in `cargo_status` when it was made (`updated_at <= created_at`), in id order, a chunk at a time
 * under a lease; `cursor` is the last cargo id handled.
 */
export interface RecoveriesTable {
  id: string;
  project_id: string;
  status: RecoveryStatus;
  cargo_status: RecoverableCargoStatus;
  since: number;
  until: number;
  total: number;
  done: Generated<number>;
  redelivered: Generated<number>;
  cursor: string | null;
  next_run_at: number;
  locked_by: string | null;
  locked_until: number | null;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}

/** A request of a batch run against a real-time endpoint (migration 024). */
export interface RealtimeRequestsTable {
  batch_id: string;
  custom_id: string;
  endpoint: string;
  model: string;
  input: string;
  state: RealtimeRequestState;
  attempts: Generated<number>;
  next_attempt_at: number;
  deadline_at: number;
  locked_by: string | null;
  locked_until: number | null;
  response: string | null;
  error: string | null;
  updated_at: number;
}

/** The slots of an endpoint: `max_concurrency` rows, each held by one worker under a lease (migration 024). */
export interface RealtimeSlotsTable {
  endpoint: string;
  slot: number;
  locked_by: string | null;
  locked_until: number | null;
}
