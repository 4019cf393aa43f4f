/**
 * A turn of work on bulk recoveries, as the delivery workers' loop takes it (and `barge cargo
 * redeliver --project`, following its own): lease one running recovery (the one named, or the one
 * due first), redeliver chunk after chunk of its set for up to a time budget, and give the lease
 * back for the next turn, here or in another process. Each chunk commits with the recovery's
 * progress under the lease (store/recoveries/work.ts): whoever goes on after a killed worker
 * starts after its last committed chunk.
 */

import { claimRecovery, recoverChunk, releaseRecovery } from '../store/recoveries/work.js';
import { nextTurn } from '../turns.js';
import type { OperationDeps } from './operation.js';

/** Cargo looked at per chunk (one transaction). */
export const RECOVERY_CHUNK = 500;
/** How long a turn keeps one recovery before giving it back. */
const TURN_MS = 1000;

export interface RecoveryTurn {
  /** The recovery worked on; null: none was due (or the one named is held elsewhere, or not running). */
  recoveryId: string | null;
  /** With none worked on and none named: when one is due next (a lease lapsing included), null if none runs. */
  nextAt: number | null;
  redelivered: number;
  /** It completed, was canceled, or was taken over during the turn. */
  ended: boolean;
}

export async function workRecovery(
  deps: OperationDeps,
  input: { workerId: string; leaseMs: number; recoveryId?: string; chunk?: number },
): Promise<RecoveryTurn> {
  const { database, clock } = deps;
  const lease = { workerId: input.workerId, leaseMs: input.leaseMs };
  const claimed = await claimRecovery(database, { ...lease, now: clock.now(), recoveryId: input.recoveryId });
  if (claimed.id === null) return { recoveryId: null, nextAt: claimed.nextAt, redelivered: 0, ended: false };
  const recoveryId = claimed.id;
  const started = performance.now();
  let redelivered = 0;
  for (;;) {
    const outcome = await recoverChunk(database, {
      ...lease,
      recoveryId,
      now: clock.now(),
      size: input.chunk ?? RECOVERY_CHUNK,
    });
    if (outcome.kind === 'stopped') return { recoveryId, nextAt: null, redelivered, ended: true };
    redelivered += outcome.redelivered;
    if (outcome.kind === 'completed') return { recoveryId, nextAt: null, redelivered, ended: true };
    if (performance.now() - started >= TURN_MS) break;
    await nextTurn();
  }
  await releaseRecovery(database, { recoveryId, workerId: input.workerId });
  return { recoveryId, nextAt: null, redelivered, ended: false };
}
