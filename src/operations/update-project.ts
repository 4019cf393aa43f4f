/**
 * Changes several of a project's settings at once (the admin API's PATCH): notification e-mail,
 * rate limit, storage budget, model allowlist, spend budget. Every field given is checked by its
 * own operation's check first, so a refusal changes nothing; then all of them change in one
 * transaction. A field left out stays as it is.
 */
import type { Project, ProjectSettings } from '../store/admin/projects.js';
import { type OperationDeps, type Result, refuse } from './operation.js';
import { applyProjectSettings } from './project-settings.js';
import { emailRefusal } from './set-notification-email.js';
import { allowlistStored, modelPatternsRefusal } from './set-project-models.js';
import { rateLimitRefusal } from './set-rate-limit.js';
import { type Distribute, type SpendBudgetInput, spendSettingOf } from './set-spend-budget.js';
import { storageBudgetRefusal } from './set-storage-budget.js';

export interface ProjectChanges {
  notificationEmail?: string | null;
  rateLimitMax?: number | null;
  storageBudget?: { dailyBytes?: number | null; heldBytes?: number | null };
  allowedModels?: string[] | null;
  spendBudget?: Distribute<SpendBudgetInput>;
}

export async function updateProject(
  deps: OperationDeps,
  input: { slug: string; changes: ProjectChanges },
): Promise<Result<Project>> {
  const { notificationEmail, rateLimitMax, storageBudget, allowedModels, spendBudget } = input.changes;
  const refused =
    (notificationEmail === undefined ? null : emailRefusal(notificationEmail)) ??
    (rateLimitMax === undefined ? null : rateLimitRefusal(rateLimitMax)) ??
    (storageBudget === undefined ? null : storageBudgetRefusal(storageBudget)) ??
    (allowedModels === undefined ? null : modelPatternsRefusal(allowedModels));
  if (refused) return refuse(refused);
  const settings: ProjectSettings = { notificationEmail, rateLimitMax, storageBudget };
  if (allowedModels !== undefined) settings.allowedModels = allowlistStored(allowedModels);
  if (spendBudget !== undefined) {
    const spend = spendSettingOf(spendBudget);
    if (!spend.ok) return spend;
    settings.spend = spend.value;
  }
  return applyProjectSettings(deps, input.slug, settings);
}
