/**
 * The body of one `POST {base_url}/chat/completions` to a self-hosted server: translated as for the
 * `openai` provider (translate-request.ts), except that the token limit goes as `max_tokens`, which
 * vLLM, TGI, Ollama and llama.cpp's server take (decisions.md, "Batches over a real-time endpoint").
 */
import type { ModelInput } from '../../domain/request-surface.js';
import { chatCompletionBody } from '../openai/translate-request.js';

export function realtimeChatBody(model: string, inputJson: string): Record<string, unknown> {
  const { max_completion_tokens, ...body } = chatCompletionBody(model, JSON.parse(inputJson) as ModelInput);
  return max_completion_tokens == null ? body : { ...body, max_tokens: max_completion_tokens };
}
