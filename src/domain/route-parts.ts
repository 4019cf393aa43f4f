/**
 * What each route takes of the request surface (decisions.md, the per-route table): a part a
 * provider cannot take is a 400 at submit naming the parameter and the provider, never a failure
 * when the batch ends hours later.
 */
import type { FieldError } from './errors.js';
import type { ProviderName } from './model-catalog.js';
import type { PartSeen, RequestPart } from './request-rules.js';

/** What a `/chat/completions` body cannot carry. */
const CHAT_COMPLETIONS_REFUSED: Partial<Record<RequestPart, string>> = {
  document_url: 'chat completions take documents as base64 PDF or text only',
  tool_result_image: 'tool messages of chat completions take text only',
  assistant_media: 'assistant messages of chat completions take text only',
  thinking: 'chat completions take no thinking settings',
  effort: 'chat completions take no thinking settings',
  top_k: 'chat completions have no top_k',
};

const REFUSED: Readonly<Record<ProviderName, Partial<Record<RequestPart, string>>>> = {
  anthropic: {},
  mock: {},
  bedrock: {
    image_url: 'Bedrock takes images as base64 only',
    document_url: 'Bedrock takes documents as base64 or text only',
    tools: 'Bedrock batch inference has no tool use',
    tool_choice: 'Bedrock batch inference has no tool use',
    tool_use: 'Bedrock batch inference has no tool use',
    tool_result: 'Bedrock batch inference has no tool use',
    output_format: 'Bedrock batch inference has no structured output',
  },
  openai: CHAT_COMPLETIONS_REFUSED,
  // Translated as for openai (decisions.md, "Batches over a real-time endpoint").
  'openai-compatible': CHAT_COMPLETIONS_REFUSED,
};

export function checkRouteParts(provider: ProviderName, parts: PartSeen[]): FieldError[] {
  const refused = REFUSED[provider];
  const problems: FieldError[] = [];
  for (const { part, path } of parts) {
    const why = refused[part];
    if (why !== undefined) problems.push({ path, message: `is not accepted by the ${provider} route: ${why}` });
  }
  return problems;
}
