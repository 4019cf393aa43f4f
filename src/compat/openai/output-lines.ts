/**
 * barge → OpenAI: the lines of a batch's output and error files. A succeeded request's cargo
 * message becomes a `chat.completion` (text blocks joined, `""` when it has none, as the string
 * the SDKs type `content` as; `stop_reason` `end_turn` and `stop_sequence` → `stop`, `max_tokens`
 * → `length`, `refusal` → `content_filter`; prompt tokens count cache reads and writes, as
 * OpenAI's do); every other request is an error line with the
 * provider's error type as its code, or `batch_cancelled` / `batch_expired` (decisions.md,
 * "Provider-compatible batch endpoints"). Pure.
 */
import type { RequestOutcome } from '../request-outcome.js';

interface MessageShape {
  id?: unknown;
  model?: unknown;
  content?: unknown;
  stop_reason?: unknown;
  usage?: {
    input_tokens?: unknown;
    output_tokens?: unknown;
    cache_creation_input_tokens?: unknown;
    cache_read_input_tokens?: unknown;
  };
}

const FINISH_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  refusal: 'content_filter',
  tool_use: 'tool_calls',
};

const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** The chat completion of a cargo's message (its JSON text); `createdAt` is when the result was stored (epoch ms). */
export function chatCompletionOf(messageJson: string, createdAt: number) {
  const message = JSON.parse(messageJson) as MessageShape;
  const texts = Array.isArray(message.content)
    ? message.content
        .filter(
          (block): block is { type: 'text'; text: string } => block?.type === 'text' && typeof block.text === 'string',
        )
        .map((block) => block.text)
    : [];
  const usage = message.usage ?? {};
  const promptTokens =
    count(usage.input_tokens) + count(usage.cache_creation_input_tokens) + count(usage.cache_read_input_tokens);
  const completionTokens = count(usage.output_tokens);
  return {
    id: typeof message.id === 'string' ? message.id : '',
    object: 'chat.completion' as const,
    created: Math.floor(createdAt / 1000),
    model: typeof message.model === 'string' ? message.model : '',
    choices: [
      {
        index: 0,
        message: { role: 'assistant' as const, content: texts.join('') },
        finish_reason: FINISH_REASONS[String(message.stop_reason)] ?? 'stop',
      },
    ],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  };
}

/** A request of the batch as the files name it. */
export interface OutputRequest {
  cargoId: string;
  customId: string;
  /** When its result was stored (epoch ms). */
  resultAt: number;
}

/** `batch_req_…`: the request's own id, from its cargo's. */
export function requestIdOf(cargoId: string): string {
  return `batch_req_${cargoId.replace(/^crg_/, '')}`;
}

/** The line (without its newline) and the file it goes to. */
export function outputLineOf(
  request: OutputRequest,
  outcome: Exclude<RequestOutcome, { type: 'processing' }>,
): { file: 'output' | 'error'; line: string } {
  const id = requestIdOf(request.cargoId);
  if (outcome.type === 'succeeded') {
    const body = chatCompletionOf(outcome.messageJson, request.resultAt);
    return {
      file: 'output',
      line: JSON.stringify({
        id,
        custom_id: request.customId,
        response: { status_code: 200, request_id: request.cargoId, body },
        error: null,
      }),
    };
  }
  const code =
    outcome.type === 'canceled' ? 'batch_cancelled' : outcome.type === 'expired' ? 'batch_expired' : outcome.errorType;
  return {
    file: 'error',
    line: JSON.stringify({
      id,
      custom_id: request.customId,
      response: null,
      error: { code, message: outcome.message },
    }),
  };
}
