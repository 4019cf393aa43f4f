/**
 * `barge migrate`: applies the migrations not yet applied and, with BARGE_SECRET_KEY set, seals the
 * webhook signing secrets stored before it (docs/security.md), as `serve` does on start.
 */
import type { Config } from '../config.js';
import { sealPlaintextWebhookSecrets } from '../store/admin/projects.js';
import { openDatabase } from '../store/database.js';
import { migrate } from '../store/migrate.js';

export interface MigrationOutcome {
  applied: string[];
  /** Projects whose signing secret was sealed; null without BARGE_SECRET_KEY. */
  sealedWebhookSecrets: number | null;
}

export async function migrateDatabase(config: Pick<Config, 'databaseUrl' | 'secretKey'>): Promise<MigrationOutcome> {
  const database = openDatabase(config.databaseUrl, { writeThread: false });
  try {
    const { applied } = await migrate(database);
    const sealed = config.secretKey ? await sealPlaintextWebhookSecrets(database, config.secretKey) : null;
    return { applied, sealedWebhookSecrets: sealed };
  } finally {
    await database.close();
  }
}
