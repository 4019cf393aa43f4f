/**
 * Sets a project's storage budget: bytes of cargo it may have accepted per UTC day, and bytes it
 * may hold (requests, metadata and results not yet purged). A field left out stays as it is; null
 * returns it to the configured default (BARGE_PROJECT_DAILY_BYTES, BARGE_PROJECT_HELD_BYTES).
 */
import type { Project, ProjectSettings } from '../store/admin/projects.js';
import { type OperationDeps, type OperationError, type Result, refusals, refuse } from './operation.js';
import { applyProjectSettings } from './project-settings.js';

type StorageBudget = NonNullable<ProjectSettings['storageBudget']>;

export async function setStorageBudget(
  deps: OperationDeps,
  input: { slug: string } & StorageBudget,
): Promise<Result<Project>> {
  const { slug, ...budget } = input;
  const refused = storageBudgetRefusal(budget);
  return refused ? refuse(refused) : applyProjectSettings(deps, slug, { storageBudget: budget });
}

/** Why a storage budget is refused, or null when it is fine. */
export function storageBudgetRefusal(budget: StorageBudget): OperationError | null {
  for (const [name, value] of [
    ['dailyBytes', budget.dailyBytes],
    ['heldBytes', budget.heldBytes],
  ] as const) {
    if (value !== undefined && value !== null && !(Number.isSafeInteger(value) && value >= 0)) {
      return refusals.invalidByteBudget(name, String(value));
    }
  }
  return null;
}
