/** A bulk recovery's dry run: how many cargo it would redeliver if it were made now. */
import type { RecoverableCargoStatus } from '../domain/lifecycle.js';
import { countCargoSet } from '../store/recoveries/recoveries.js';
import type { OperationDeps, Result } from './operation.js';
import { type RecoveryRequest, recoverySet } from './recovery-set.js';

export interface RecoveryCount {
  status: RecoverableCargoStatus;
  since: number;
  until: number;
  count: number;
}

export async function countRecovery(deps: OperationDeps, input: RecoveryRequest): Promise<Result<RecoveryCount>> {
  const set = await recoverySet(deps, input, deps.clock.now());
  if (!set.ok) return set;
  const { cargoStatus, since, until } = set.value;
  return {
    ok: true,
    value: { status: cargoStatus, since, until, count: await countCargoSet(deps.database, set.value) },
  };
}
