/**
 * Schedules a fresh delivery of a finished cargo on every channel it asked for (its webhook, its
 * bucket or message target): of any project (`barge cargo redeliver <id>`), or of the project
 * named (the admin API: another project's cargo is not found). Refused as domain/redelivery.ts
 * says: no result yet, the result purged, no delivery asked for, a delivery in progress.
 */
import { findProjectBySlug } from '../store/admin/projects.js';
import { createRedelivery } from '../store/deliveries/redeliver.js';
import type { DeliveryChannelName } from '../store/schema.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export interface ScheduledRedelivery {
  cargoId: string;
  channels: DeliveryChannelName[];
  /** The cargo's status from now on. */
  status: 'callback_pending';
}

export async function redeliverCargo(
  deps: OperationDeps,
  input: { cargoId: string; slug?: string },
): Promise<Result<ScheduledRedelivery>> {
  let projectId: string | undefined;
  if (input.slug !== undefined) {
    const project = await findProjectBySlug(deps.database, input.slug);
    if (!project) return refuse(refusals.projectNotFound(input.slug));
    projectId = project.id;
  }
  const outcome = await createRedelivery(deps.database, input.cargoId, deps.clock.now(), projectId);
  if ('refused' in outcome) return refuse(outcome.refused);
  return succeed({ cargoId: input.cargoId, channels: outcome.channels, status: 'callback_pending' });
}
