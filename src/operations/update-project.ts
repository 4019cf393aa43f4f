/**
 * Changes several of a project's settings at once (the admin API's PATCH): notification e-mail,
 * rate limit, storage budget, model allowlist, spend budget. Each is the operation of its own
 * (set-notification-email, set-rate-limit, ...); the checks that can refuse run first, for every
 * field given, so a refusal changes nothing. A field left out stays as it is.
 */
import { isEmailAddress } from '../domain/connections.js';
import { findProjectBySlug, type Project } from '../store/admin/projects.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';
import { setNotificationEmail } from './set-notification-email.js';
import { modelPatternsRefusal, setProjectModels } from './set-project-models.js';
import { setRateLimit } from './set-rate-limit.js';
import { type SpendBudgetInput, setSpendBudget } from './set-spend-budget.js';
import { setStorageBudget } from './set-storage-budget.js';

type Distribute<T> = T extends unknown ? Omit<T, 'slug'> : never;

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
  const { slug, changes } = input;
  const project = await findProjectBySlug(deps.database, slug);
  if (!project) return refuse(refusals.projectNotFound(slug));
  // The checks the setters would make, before any of them writes.
  const email = changes.notificationEmail;
  if (email != null && !isEmailAddress(email)) return refuse(refusals.invalidEmail(email));
  if (changes.allowedModels !== undefined) {
    const refused = modelPatternsRefusal(changes.allowedModels);
    if (refused) return refuse(refused);
  }
  const max = changes.rateLimitMax;
  if (max != null && !(Number.isSafeInteger(max) && max >= 1)) return refuse(refusals.invalidRateLimit(String(max)));

  const steps: (() => Promise<Result<unknown>>)[] = [];
  if (email !== undefined) steps.push(() => setNotificationEmail(deps, { slug, email }));
  if (max !== undefined) steps.push(() => setRateLimit(deps, { slug, max }));
  if (changes.storageBudget !== undefined) {
    const budget = changes.storageBudget;
    steps.push(() => setStorageBudget(deps, { slug, ...budget }));
  }
  if (changes.allowedModels !== undefined) {
    const allow = changes.allowedModels;
    steps.push(() => setProjectModels(deps, { slug, allow }));
  }
  if (changes.spendBudget !== undefined) {
    const spend = changes.spendBudget;
    steps.push(() => setSpendBudget(deps, { slug, ...spend } as SpendBudgetInput));
  }
  for (const step of steps) {
    const done = await step();
    if (!done.ok) return refuse(done.error);
  }
  const updated = await findProjectBySlug(deps.database, slug);
  return updated ? succeed(updated) : refuse(refusals.projectNotFound(slug));
}
