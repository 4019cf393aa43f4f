/**
 * What a bulk recovery asks for, checked: which cargo (`callback_failed` by default, or
 * `callback_delivered`), created in [since, until) of a project, `until` at most now; the set is
 * fixed at `now` (store/recoveries/cargo-set.ts). Shared by the dry-run count and the recovery.
 */
import { isoTime } from '../domain/clock.js';
import { parseIsoTime } from '../domain/iso-time.js';
import { RECOVERABLE_CARGO_STATUSES, type RecoverableCargoStatus } from '../domain/lifecycle.js';
import { findProjectBySlug } from '../store/admin/projects.js';
import type { CargoSet } from '../store/recoveries/cargo-set.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export interface RecoveryRequest {
  slug: string;
  /** `callback_failed` (default) or `callback_delivered`. */
  status?: string;
  /** ISO 8601 (domain/iso-time.ts): cargo created at or after this time. */
  since: string;
  /** ISO 8601: cargo created before this time; default and at most, now. */
  until?: string;
}

const isRecoverable = (status: string): status is RecoverableCargoStatus =>
  (RECOVERABLE_CARGO_STATUSES as readonly string[]).includes(status);

export async function recoverySet(
  deps: Pick<OperationDeps, 'database'>,
  input: RecoveryRequest,
  now: number,
): Promise<Result<CargoSet>> {
  const status = input.status ?? 'callback_failed';
  if (!isRecoverable(status)) return refuse(refusals.invalidRecoveryStatus(status, RECOVERABLE_CARGO_STATUSES));
  const since = parseIsoTime(input.since);
  if (since === null) return refuse(refusals.invalidTime('since', input.since));
  const until = input.until === undefined ? now : parseIsoTime(input.until);
  if (until === null) return refuse(refusals.invalidTime('until', input.until as string));
  const end = Math.min(until, now);
  if (since >= end) return refuse(refusals.invalidWindow(isoTime(since), isoTime(end)));
  const project = await findProjectBySlug(deps.database, input.slug);
  if (!project) return refuse(refusals.projectNotFound(input.slug));
  return succeed({ projectId: project.id, cargoStatus: status, since, until: end, fixedAt: now });
}
