/**
 * Sets a project's spend budget: its own monthly budget (USD, UTC calendar month) with an optional
 * daily one (UTC day), `none` (no budget, even when BARGE_DEFAULT_MONTHLY_BUDGET_USD is set), or
 * `default` (that setting; the initial state). Every API process applies it from the project's
 * next request (the auth change counter).
 */
import type { SpendSetting } from '../domain/spend.js';
import { type Project, setProjectSpendBudget } from '../store/admin/projects.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

/** The largest budget taken (USD): far past any real one, and exact in nano-USD. */
const MAX_BUDGET_USD = 1e6;

export type SpendBudgetInput =
  | { slug: string; mode: 'own'; monthlyUsd: number; dailyUsd?: number | null }
  | { slug: string; mode: 'none' | 'default' };

export async function setSpendBudget(deps: OperationDeps, input: SpendBudgetInput): Promise<Result<Project>> {
  let setting: SpendSetting = { mode: input.mode, monthlyUsd: null, dailyUsd: null };
  if (input.mode === 'own') {
    for (const [name, value] of [
      ['monthlyUsd', input.monthlyUsd],
      ['dailyUsd', input.dailyUsd ?? null],
    ] as const) {
      if (value !== null && !(Number.isFinite(value) && value >= 0 && value <= MAX_BUDGET_USD)) {
        return refuse(refusals.invalidSpendBudget(name, String(value), `use US dollars from 0 to ${MAX_BUDGET_USD}`));
      }
    }
    setting = { mode: 'own', monthlyUsd: input.monthlyUsd, dailyUsd: input.dailyUsd ?? null };
  }
  const project = await setProjectSpendBudget(deps.database, input.slug, setting, deps.clock.now());
  return project ? succeed(project) : refuse(refusals.projectNotFound(input.slug));
}
