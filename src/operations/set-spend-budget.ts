/**
 * Sets a project's spend budget: its own monthly budget (USD, UTC calendar month) with an optional
 * daily one (UTC day), `none` (no budget, even when BARGE_DEFAULT_MONTHLY_BUDGET_USD is set), or
 * `default` (that setting; the initial state). Every API process applies it from the project's
 * next request (the auth change counter).
 */
import type { SpendSetting } from '../domain/spend.js';
import type { Project } from '../store/admin/projects.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';
import { applyProjectSettings } from './project-settings.js';

/** The largest budget taken (USD): far past any real one, and exact in nano-USD. */
const MAX_BUDGET_USD = 1e6;

/** A union's members, each without its slug. */
export type Distribute<T> = T extends unknown ? Omit<T, 'slug'> : never;

export type SpendBudgetInput =
  | { slug: string; mode: 'own'; monthlyUsd: number; dailyUsd?: number | null }
  | { slug: string; mode: 'none' | 'default' };

export async function setSpendBudget(deps: OperationDeps, input: SpendBudgetInput): Promise<Result<Project>> {
  const setting = spendSettingOf(input);
  return setting.ok ? applyProjectSettings(deps, input.slug, { spend: setting.value }) : setting;
}

/** The setting a spend budget input stands for, or why it is refused. */
export function spendSettingOf(input: Distribute<SpendBudgetInput>): Result<SpendSetting> {
  if (input.mode !== 'own') return succeed({ mode: input.mode, monthlyUsd: null, dailyUsd: null });
  for (const [name, value] of [
    ['monthlyUsd', input.monthlyUsd],
    ['dailyUsd', input.dailyUsd ?? null],
  ] as const) {
    if (value !== null && !(Number.isFinite(value) && value >= 0 && value <= MAX_BUDGET_USD)) {
      return refuse(refusals.invalidSpendBudget(name, String(value), `use US dollars from 0 to ${MAX_BUDGET_USD}`));
    }
  }
  return succeed({ mode: 'own', monthlyUsd: input.monthlyUsd, dailyUsd: input.dailyUsd ?? null });
}
