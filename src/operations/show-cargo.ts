/**
 * One cargo of a project as an operator sees it: its rows (store/cargo/detail.ts), its status
 * history told from them (domain/cargo-history.ts), what tracking says of it, and whether a
 * redelivery would be taken now (domain/redelivery.ts, the rule the redelivery itself follows).
 */
import { cargoHistory, type HistoryEntry } from '../domain/cargo-history.js';
import { trackingDescription } from '../domain/lifecycle.js';
import { type RedeliveryRefusal, redeliveryRefusal } from '../domain/redelivery.js';
import { findProjectBySlug } from '../store/admin/projects.js';
import { type CargoDetail, findCargoDetail } from '../store/cargo/detail.js';
import { submitErrorOf } from '../store/cargo/find-for-project.js';
import { requestedChannels } from '../store/deliveries/create.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export type { CargoDetail, HistoryEntry, RedeliveryRefusal };

export interface CargoStory {
  cargo: CargoDetail;
  statusDescription: string;
  history: HistoryEntry[];
  /** Why a redelivery would be refused now; null: it would be scheduled. */
  redeliveryRefusal: RedeliveryRefusal | null;
}

export async function showCargo(
  deps: Pick<OperationDeps, 'database'>,
  input: { slug: string; cargoId: string },
): Promise<Result<CargoStory>> {
  const project = await findProjectBySlug(deps.database, input.slug);
  if (!project) return refuse(refusals.projectNotFound(input.slug));
  const cargo = await findCargoDetail(deps.database, project.id, input.cargoId);
  if (!cargo) return refuse(refusals.cargoNotFound(input.cargoId));
  // Each delivery's last attempt's class, as tracking reads it.
  const lastClass = new Map(cargo.attempts.map((a) => [a.deliveryId, a.errorClass]));
  return succeed({
    cargo,
    statusDescription: trackingDescription(cargo.status, {
      resultError: cargo.result?.errorMessage ?? null,
      submitError: submitErrorOf(cargo.batch?.status ?? null, cargo.batch?.lastError ?? null),
      deliveries: cargo.deliveries.map((d) => ({
        channel: d.channel,
        status: d.status,
        attempts: d.attempts,
        errorClass: lastClass.get(d.id) ?? null,
        lastError: d.lastError,
      })),
    }),
    history: cargoHistory({
      status: cargo.status,
      createdAt: cargo.createdAt,
      updatedAt: cargo.updatedAt,
      batch: cargo.batch,
      result: cargo.result,
      deliveries: cargo.deliveries,
    }),
    redeliveryRefusal: redeliveryRefusal({
      cargoId: cargo.id,
      hasResult: cargo.result !== null,
      purged: cargo.result?.purgedAt != null,
      channels: requestedChannels(cargo.callbackUrl, cargo.callback).length,
      deliveryPending: cargo.deliveries.some((d) => d.status === 'pending'),
    }),
  });
}
