/**
 * Deactivates an API key. The key is kept (its prefix still identifies it) and every API process
 * answers it 401 from its next request on.
 */
import { type ApiKey, deactivateApiKey as updateApiKey } from '../store/admin/api-keys.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export async function deactivateApiKey(
  deps: Pick<OperationDeps, 'database'>,
  input: { keyId: string },
): Promise<Result<ApiKey>> {
  const updated = await updateApiKey(deps.database, input.keyId);
  return updated ? succeed(updated) : refuse(refusals.apiKeyNotFound(input.keyId));
}
