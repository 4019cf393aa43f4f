/**
 * Makes a bulk recovery: fixes its set now (store/recoveries/cargo-set.ts), counts it, and stores
 * it running; the workers (and `barge cargo redeliver --project`) then redeliver the set in
 * bounded chunks under a lease (work-recovery.ts). An empty set is completed at once.
 */
import { newId } from '../domain/ids.js';
import { countCargoSet, insertRecovery, type Recovery } from '../store/recoveries/recoveries.js';
import type { OperationDeps, Result } from './operation.js';
import { type RecoveryRequest, recoverySet } from './recovery-set.js';

export type { Recovery };

export async function createRecovery(deps: OperationDeps, input: RecoveryRequest): Promise<Result<Recovery>> {
  const now = deps.clock.now();
  const set = await recoverySet(deps, input, now);
  if (!set.ok) return set;
  const total = await countCargoSet(deps.database, set.value);
  return { ok: true, value: await insertRecovery(deps.database, { id: newId('rcv', now), set: set.value, total }) };
}
