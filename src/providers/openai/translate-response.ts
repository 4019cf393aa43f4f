/**
 * Response translation for OpenAI's Batch API: a chat completion becomes the interface document's
 * model message (spec/decisions.md, "What the result's response is, per provider"), with `id` and
 * `model` as OpenAI returned them.
 */
import type { ModelMessage } from '../../domain/model-message.js';

export interface ChatCompletion {
  id?: string;
  model?: string;
  choices?: {
    finish_reason?: string | null;
    message?: {
      content?: string | null;
      refusal?: string | null;
      tool_calls?: { id?: string; type?: string; function?: { name?: string; arguments?: string } }[] | null;
    } | null;
  }[];
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number | null } | null;
  } | null;
}

/**
 * `stop` → `end_turn`, `length` → `max_tokens`, `content_filter` → `refusal` (decisions.md);
 * `tool_calls` and the legacy `function_call` → `tool_use`, their Messages-API counterpart. Chat
 * completions does not say whether `stop` came from a stop sequence or the model's own end, so it
 * is always `end_turn` and `stop_sequence` is null. Anything unknown is `end_turn`: the text is
 * complete as far as anyone can tell.
 */
export function stopReasonOf(finishReason: string | null | undefined): ModelMessage['stop_reason'] {
  switch (finishReason) {
    case 'length':
      return 'max_tokens';
    case 'content_filter':
      return 'refusal';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    default:
      return 'end_turn';
  }
}

export function modelMessageOf(completion: ChatCompletion): ModelMessage {
  const choice = completion.choices?.[0];
  const message = choice?.message;
  // A refusal arrives as `refusal` text with `content: null`; it is the answer the client gets.
  const refused = typeof message?.refusal === 'string' && message.refusal !== '' && !message.content;
  const text = (refused ? message?.refusal : message?.content) ?? '';
  const calls = message?.tool_calls ?? [];
  const content: ModelMessage['content'] = text !== '' || calls.length === 0 ? [{ type: 'text', text }] : [];
  for (const call of calls) {
    content.push({
      type: 'tool_use',
      id: call.id ?? '',
      name: call.function?.name ?? '',
      input: toolInput(call.function?.arguments ?? ''),
    });
  }
  // Cached prompt tokens are part of prompt_tokens; the Messages API counts them apart.
  const prompt = completion.usage?.prompt_tokens ?? 0;
  const cached = completion.usage?.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    id: completion.id ?? '',
    type: 'message',
    role: 'assistant',
    content,
    model: completion.model ?? '',
    stop_reason: refused ? 'refusal' : stopReasonOf(choice?.finish_reason),
    stop_sequence: null,
    usage: {
      input_tokens: prompt - cached,
      cache_read_input_tokens: cached,
      output_tokens: completion.usage?.completion_tokens ?? 0,
    },
  };
}

/**
 * A tool call's arguments as the tool_use block's `input`. The model does not always produce JSON:
 * text that is not a JSON object is kept whole as `{arguments: <text>}`, never lost.
 */
function toolInput(args: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(args);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // not JSON: kept as text below
  }
  return { arguments: args };
}
