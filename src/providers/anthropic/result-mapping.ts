/** Maps one line of a Message Batches results file to barge's RequestResult (decisions.md, "What the result's response is"). */
import type { MessageBatchIndividualResponse } from '@anthropic-ai/sdk/resources/messages/batches';
import type { ModelMessage } from '../../domain/model-message.js';
import { CANCELED_ERROR, REQUEST_EXPIRED_ERROR } from '../../domain/records.js';
import type { RequestResult } from '../provider.js';

/**
 * `succeeded` keeps the provider's Message exactly as parsed from the line, every field included
 * (decisions.md); `errored` becomes `<error type>: <message>` from the nested `result.error.error`
 * (providers.md §1.6); `canceled` and `expired` carry svc-mock's texts.
 */
export function requestResultOf(line: MessageBatchIndividualResponse): RequestResult {
  const customId = line.custom_id;
  const result = line.result;
  switch (result.type) {
    case 'succeeded':
      return { customId, success: true, response: result.message as unknown as ModelMessage };
    case 'errored':
      return { customId, success: false, kind: 'errored', error: erroredText(result.error) };
    case 'canceled':
      return { customId, success: false, kind: 'canceled', error: CANCELED_ERROR };
    case 'expired':
      return { customId, success: false, kind: 'expired', error: REQUEST_EXPIRED_ERROR };
    default: {
      const type = (result as { type?: unknown }).type;
      return { customId, success: false, kind: 'errored', error: `unknown_result: result type ${String(type)}` };
    }
  }
}

/** `{type: "error", error: {type, message}}` as documented; a flat `{type, message}` is read too. */
function erroredText(error: unknown): string {
  const outer = (error ?? {}) as { type?: unknown; message?: unknown; error?: { type?: unknown; message?: unknown } };
  const inner = outer.error && typeof outer.error === 'object' ? outer.error : outer;
  const type = typeof inner.type === 'string' ? inner.type : 'api_error';
  const message = typeof inner.message === 'string' ? inner.message : 'the provider gave no message';
  return `${type}: ${message}`;
}
