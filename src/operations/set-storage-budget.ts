/**
 * Sets a project's storage budget: bytes of cargo it may have accepted per UTC day, and bytes it
 * may hold (requests, metadata and results not yet purged). A field left out stays as it is; null
 * returns it to the configured default (BARGE_PROJECT_DAILY_BYTES, BARGE_PROJECT_HELD_BYTES).
 */
import { type Project, setProjectStorageBudget } from '../store/admin/projects.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export async function setStorageBudget(
  deps: OperationDeps,
  input: { slug: string; dailyBytes?: number | null; heldBytes?: number | null },
): Promise<Result<Project>> {
  for (const [name, value] of [
    ['dailyBytes', input.dailyBytes],
    ['heldBytes', input.heldBytes],
  ] as const) {
    if (value !== undefined && value !== null && !(Number.isSafeInteger(value) && value >= 0)) {
      return refuse(refusals.invalidByteBudget(name, String(value)));
    }
  }
  const budget = {
    ...(input.dailyBytes === undefined ? {} : { dailyBytes: input.dailyBytes }),
    ...(input.heldBytes === undefined ? {} : { heldBytes: input.heldBytes }),
  };
  const project = await setProjectStorageBudget(deps.database, input.slug, budget, deps.clock.now());
  return project ? succeed(project) : refuse(refusals.projectNotFound(input.slug));
}
