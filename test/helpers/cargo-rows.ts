/** Cargo rows as POST /cargo/load writes them, for suites that put cargo into the store directly. */
import { newId } from '../../src/domain/ids.js';
import type { NewCargo } from '../../src/store/cargo/insert.js';

/**
 * A pending svc-mock cargo row shaped as POST /cargo/load writes it (src/http/routes/load-cargo.ts),
 * for suites that put cargo into the store directly; `overrides` change any column.
 */
export function pendingCargoRow(
  projectId: string,
  options: { now?: number; content?: string; maxTokens?: number } & Partial<NewCargo> = {},
): NewCargo {
  const { now = Date.now(), content = 'hi', maxTokens = 1024, ...overrides } = options;
  const request = JSON.stringify({
    requests: [{ modelInput: { max_tokens: maxTokens, messages: [{ role: 'user', content }] } }],
  });
  return {
    id: newId('crg', now),
    project_id: projectId,
    status: 'pending',
    model: 'svc-mock',
    provider: 'mock',
    provider_model: 'svc-mock',
    request,
    request_count: 1,
    is_records: 0,
    request_bytes: Buffer.byteLength(request),
    metadata: null,
    result_ttl_seconds: 3600,
    callback_url: null,
    callback: null,
    created_at: now,
    updated_at: now,
    ...overrides,
  };
}
