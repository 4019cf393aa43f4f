/** API keys: create, list, deactivate, look up by hash, and record use. */
import { apiKeyPrefix, generateApiKey, hashApiKey } from '../../domain/api-keys.js';
import { newId } from '../../domain/ids.js';
import type { SpendSetting } from '../../domain/spend.js';
import { bumpAuthChanges } from '../auth-changes.js';
import type { Database } from '../database.js';
import type { ApiKeysTable } from '../schema.js';
import { parseAllowedModels, spendSettingOf } from './projects.js';

export interface ApiKey {
  id: string;
  projectId: string;
  name: string;
  keyPrefix: string;
  isActive: boolean;
  expiresAt: number | null;
  lastUsedAt: number | null;
  createdAt: number;
}

function toApiKey(row: ApiKeysTable): ApiKey {
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    keyPrefix: row.key_prefix,
    isActive: row.is_active === 1,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    createdAt: row.created_at,
  };
}

/** Creates a key and returns it in full: the only time the full key exists outside its holder. */
export async function createApiKey(
  database: Database,
  input: { projectId: string; name: string; expiresAt: number | null; now: number },
): Promise<{ apiKey: ApiKey; key: string }> {
  const key = generateApiKey();
  const row: ApiKeysTable = {
    id: newId('key', input.now),
    project_id: input.projectId,
    name: input.name,
    key_prefix: apiKeyPrefix(key),
    key_hash: hashApiKey(key),
    is_active: 1,
    expires_at: input.expiresAt,
    last_used_at: null,
    created_at: input.now,
  };
  await database.write.transaction().execute(async (tx) => {
    await tx.insertInto('api_keys').values(row).execute();
    // A process may have cached this hash as unknown.
    await bumpAuthChanges(tx);
  });
  return { apiKey: toApiKey(row), key };
}

export async function listApiKeys(database: Database, projectId: string): Promise<ApiKey[]> {
  const rows = await database.read
    .selectFrom('api_keys')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('created_at')
    .execute();
  return rows.map(toApiKey);
}

/** Every API process refuses the key from its next request on (the change counter moves with it). */
export async function deactivateApiKey(
  database: Database,
  keyId: string,
  projectId?: string,
): Promise<ApiKey | undefined> {
  return database.write.transaction().execute(async (tx) => {
    let update = tx.updateTable('api_keys').set({ is_active: 0 }).where('id', '=', keyId);
    // The admin API names a key within its project: another project's key is not found.
    if (projectId !== undefined) update = update.where('project_id', '=', projectId);
    const row = await update.returningAll().executeTakeFirst();
    if (row) await bumpAuthChanges(tx);
    return row && toApiKey(row);
  });
}

/** What authentication needs to know about a key, found by the SHA-256 of the presented key. */
export interface KeyCredentials {
  keyId: string;
  keyIsActive: boolean;
  expiresAt: number | null;
  projectId: string;
  projectSlug: string;
  projectIsActive: boolean;
  projectRateLimitMax: number | null;
  /** The project's storage budget; null: the configured default. */
  projectDailyByteBudget: number | null;
  projectHeldByteBudget: number | null;
  /** The project's model allowlist (globs); null: every model. */
  projectAllowedModels: string[] | null;
  /** The project's spend budget setting. */
  projectSpend: SpendSetting;
}

export async function findKeyCredentials(database: Database, keyHash: string): Promise<KeyCredentials | undefined> {
  const row = await database.read
    .selectFrom('api_keys as k')
    .innerJoin('projects as p', 'p.id', 'k.project_id')
    .select([
      'k.id as key_id',
      'k.is_active as key_is_active',
      'k.expires_at',
      'p.id as project_id',
      'p.slug',
      'p.is_active as project_is_active',
      'p.rate_limit_max',
      'p.daily_byte_budget',
      'p.held_byte_budget',
      'p.allowed_models',
      'p.budget_mode',
      'p.monthly_budget_usd',
      'p.daily_budget_usd',
    ])
    .where('k.key_hash', '=', keyHash)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    keyId: row.key_id,
    keyIsActive: row.key_is_active === 1,
    expiresAt: row.expires_at,
    projectId: row.project_id,
    projectSlug: row.slug,
    projectIsActive: row.project_is_active === 1,
    projectRateLimitMax: row.rate_limit_max,
    projectDailyByteBudget: row.daily_byte_budget === null ? null : Number(row.daily_byte_budget),
    projectHeldByteBudget: row.held_byte_budget === null ? null : Number(row.held_byte_budget),
    projectAllowedModels: parseAllowedModels(row.allowed_models),
    projectSpend: spendSettingOf(row),
  };
}

export async function touchApiKeys(database: Database, keyIds: string[], now: number): Promise<void> {
  if (keyIds.length === 0) return;
  await database.write.updateTable('api_keys').set({ last_used_at: now }).where('id', 'in', keyIds).execute();
}
