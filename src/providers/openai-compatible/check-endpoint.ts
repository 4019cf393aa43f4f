/**
 * `barge provider check openai-compatible`: each endpoint reachable, the catalog's models for it
 * listed by `GET {base_url}/models`, and how long that took. Read-only; never throws.
 */
import { CHECK_TIMEOUT_MS, type ProviderCapability } from '../provider.js';
import { type Endpoint, endpointHeaders, errorText, fetchFailure, scrubKey } from './send-request.js';

export async function checkEndpoint(endpoint: Endpoint, models: readonly string[]): Promise<ProviderCapability> {
  const name = `endpoint ${endpoint.name}`;
  const started = performance.now();
  let status: number;
  let text: string;
  try {
    const response = await fetch(`${endpoint.baseUrl}/models`, {
      headers: endpointHeaders(endpoint),
      signal: AbortSignal.timeout(Math.min(CHECK_TIMEOUT_MS, endpoint.timeoutMs)),
    });
    status = response.status;
    text = await response.text();
  } catch (err) {
    const { timedOut, why } = fetchFailure(err);
    const detail = `unreachable at ${endpoint.baseUrl}: ${timedOut ? 'no answer in time' : why}`;
    return { name, ok: false, detail: scrubKey(endpoint, detail) };
  }
  const latency = `${Math.round(performance.now() - started)} ms`;
  if (status < 200 || status >= 300) {
    return {
      name,
      ok: false,
      detail: scrubKey(endpoint, `reachable (${latency}), GET /models answered ${errorText(status, text)}`),
    };
  }
  let listed: Set<string>;
  try {
    const body = JSON.parse(text) as { data?: { id?: unknown }[] };
    listed = new Set((body.data ?? []).map((m) => String(m.id)));
  } catch {
    return { name, ok: false, detail: `reachable (${latency}), but GET /models did not answer a JSON model list` };
  }
  const missing = models.filter((m) => !listed.has(m));
  if (missing.length > 0) {
    return {
      name,
      ok: false,
      detail: `reachable (${latency}); not listed by GET /models: ${missing.join(', ')} (it lists ${[...listed].slice(0, 10).join(', ') || 'none'})`,
    };
  }
  return {
    name,
    ok: true,
    detail: `reachable (${latency}); ${models.length === 0 ? 'no catalog model routes to it' : `listed: ${models.join(', ')}`}`,
  };
}
