/**
 * Request translation for OpenAI's Batch API: barge's stored model input (the Messages-API shape
 * the client sent, less `model`) becomes a `/v1/chat/completions` body and one line of the batch
 * input file (spec/decisions.md, "What the result's response is, per provider").
 */
import type { Message, ModelInput } from '../../domain/cargo-request.js';

export const CHAT_COMPLETIONS = '/v1/chat/completions';

/** Fields whose names or shapes change; every other field goes through as given. */
const RENAMED = new Set(['messages', 'system', 'max_tokens', 'stop_sequences']);

/**
 * The chat-completions body for one request. `system` becomes a leading system message,
 * `max_tokens` → `max_completion_tokens`, `stop_sequences` → `stop`; text blocks stay text content
 * parts. `temperature` and `top_p` go as given, and so does any field chat completions does not
 * know: the API then fails that one request with a 400 line naming it, not the whole batch
 * (decisions.md has submit validation refuse `top_k` for `openai`, so it should never get here).
 */
export function chatCompletionBody(model: string, input: ModelInput): Record<string, unknown> {
  const messages: { role: string; content: Message['content'] }[] = [];
  if (typeof input.system === 'string') messages.push({ role: 'system', content: input.system });
  for (const message of input.messages ?? []) {
    messages.push({ role: message.role, content: contentParts(message.content) });
  }
  const body: Record<string, unknown> = { model, messages };
  if (input.max_tokens !== undefined) body.max_completion_tokens = input.max_tokens;
  if (input.stop_sequences !== undefined) body.stop = input.stop_sequences;
  for (const [field, value] of Object.entries(input)) {
    if (!RENAMED.has(field) && value !== undefined) body[field] = value;
  }
  return body;
}

/** A string stays a string; text blocks become `{type: "text", text}` parts (nothing else kept). */
function contentParts(content: Message['content']): Message['content'] {
  if (typeof content === 'string') return content;
  return content.map((block) => ({ type: 'text' as const, text: block.text }));
}

/** One line of the batch input file (without its newline), from a stored request's JSON text. */
export function inputLine(model: string, customId: string, inputJson: string): string {
  const body = chatCompletionBody(model, JSON.parse(inputJson) as ModelInput);
  return JSON.stringify({ custom_id: customId, method: 'POST', url: CHAT_COMPLETIONS, body });
}
