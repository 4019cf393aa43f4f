/** Database migrations: the ordered list, and applying those not yet applied, each once in its own transaction. */
import { type Kysely, sql } from 'kysely';
import type { Database } from './database.js';
import * as initial from './migrations/001_initial.js';
import * as pipeline from './migrations/002_pipeline.js';
import * as deliveries from './migrations/003_deliveries.js';
import * as connections from './migrations/004_connections.js';
import * as targetsOutbox from './migrations/005_targets_outbox.js';
import * as resultDeliveriesOnce from './migrations/006_result_deliveries_once.js';
import * as storageBudget from './migrations/007_storage_budget.js';
import * as narrowCargo from './migrations/009_narrow_cargo.js';
import * as usage from './migrations/010_usage.js';
import * as submitSteps from './migrations/011_submit_steps.js';
import * as refusals from './migrations/012_refusals.js';
import * as cargoBatchOrder from './migrations/013_cargo_batch_order.js';
import * as storageStatementTriggers from './migrations/014_storage_statement_triggers.js';
import * as cargoPendingByProject from './migrations/015_cargo_pending_by_project.js';
import * as cacheTokens from './migrations/016_cache_tokens.js';
import * as cancelListIdempotency from './migrations/017_cancel_list_idempotency.js';
import * as sqliteStorageCounters from './migrations/018_sqlite_storage_counters.js';
import * as modelPolicyBudgets from './migrations/019_model_policy_budgets.js';
import * as adminTokens from './migrations/020_admin_tokens.js';
import * as recoveries from './migrations/021_recoveries.js';
import * as dashboardSessions from './migrations/022_dashboard_sessions.js';
import * as compatBatches from './migrations/023_compat_batches.js';
import * as realtimeRequests from './migrations/024_realtime_requests.js';
import * as compatCounts from './migrations/025_compat_counts.js';
import * as usageDays from './migrations/026_usage_days.js';
import * as cheaperCargoWrites from './migrations/027_cheaper_cargo_writes.js';

interface Migration {
  up(db: Kysely<any>, dialect: Database['dialect']): Promise<void>;
  /** SQLite: rebuilds a table others reference; foreign keys are checked at the end instead. */
  foreignKeysOff?: boolean;
}

/** Numbered, in order, never edited once landed; a new change is a new file here. */
const MIGRATIONS: [string, Migration][] = [
  ['001_initial', initial],
  ['002_pipeline', pipeline],
  ['003_deliveries', deliveries],
  ['004_connections', connections],
  ['005_targets_outbox', targetsOutbox],
  ['006_result_deliveries_once', resultDeliveriesOnce],
  ['007_storage_budget', storageBudget],
  ['009_narrow_cargo', narrowCargo],
  ['010_usage', usage],
  ['011_submit_steps', submitSteps],
  ['012_refusals', refusals],
  ['013_cargo_batch_order', cargoBatchOrder],
  ['014_storage_statement_triggers', storageStatementTriggers],
  ['015_cargo_pending_by_project', cargoPendingByProject],
  ['016_cache_tokens', cacheTokens],
  ['017_cancel_list_idempotency', cancelListIdempotency],
  ['018_sqlite_storage_counters', sqliteStorageCounters],
  ['019_model_policy_budgets', modelPolicyBudgets],
  ['020_admin_tokens', adminTokens],
  ['021_recoveries', recoveries],
  ['022_dashboard_sessions', dashboardSessions],
  ['023_compat_batches', compatBatches],
  ['024_realtime_requests', realtimeRequests],
  ['025_compat_counts', compatCounts],
  ['026_usage_days', usageDays],
  ['027_cheaper_cargo_writes', cheaperCargoWrites],
];

export interface MigrationReport {
  applied: string[];
}

/**
 * Applies what has not been applied, each migration in its own transaction with its bookkeeping
 * row. Kysely's Migrator is not used: it inspects the tables of every schema in the database, which
 * breaks when another installation (or test run) in the same PostgreSQL database drops its schema
 * meanwhile. Concurrent starts take turns on an advisory lock (PostgreSQL) or the write lock
 * (SQLite), so each migration runs once. `through` stops after the named migration (the upgrade
 * tests build an older schema with it).
 */
export async function migrate(database: Database, options: { through?: string } = {}): Promise<MigrationReport> {
  const db = database.write as unknown as Kysely<any>;
  const lock = (tx: Kysely<any>) =>
    database.dialect === 'postgres'
      ? sql`select pg_advisory_xact_lock(hashtext(current_schema() || '.barge_migrations'))`.execute(tx)
      : Promise.resolve();
  await db.transaction().execute(async (tx) => {
    await lock(tx);
    await tx.schema
      .createTable('barge_migrations')
      .ifNotExists()
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('applied_at', 'bigint', (c) => c.notNull())
      .execute();
  });
  const applied: string[] = [];
  for (const [name, migration] of MIGRATIONS) {
    // SQLite's documented way to rebuild a referenced table: foreign keys off around the
    // transaction (the pragma is ignored inside one), and a foreign_key_check before it commits.
    const foreignKeysOff = migration.foreignKeysOff === true && database.dialect === 'sqlite';
    if (foreignKeysOff) await sql`pragma foreign_keys = off`.execute(db);
    try {
      const ran = await db.transaction().execute(async (tx) => {
        await lock(tx);
        const done = await tx.selectFrom('barge_migrations').select('name').where('name', '=', name).executeTakeFirst();
        if (done) return false;
        await migration.up(tx, database.dialect);
        if (foreignKeysOff) {
          const broken = await sql`pragma foreign_key_check`.execute(tx);
          if (broken.rows.length > 0)
            throw new Error(`${name} would break foreign keys: ${JSON.stringify(broken.rows)}`);
        }
        await tx.insertInto('barge_migrations').values({ name, applied_at: Date.now() }).execute();
        return true;
      });
      if (ran) applied.push(name);
    } finally {
      if (foreignKeysOff) await sql`pragma foreign_keys = on`.execute(db);
    }
    if (name === options.through) break;
  }
  return { applied };
}
