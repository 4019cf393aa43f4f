/**
 * A model message as the interface document (section 2.4) and the Messages API define it. `refusal`
 * and `tool_use` are the Messages API's reasons that translated providers produce (OpenAI's
 * `content_filter` and `tool_calls`). The cache counts of `usage` are there when the provider
 * reports prompt caching.
 */
export interface ModelMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  content: ModelContentBlock[];
  model: string;
  stop_reason: 'end_turn' | 'max_tokens' | 'stop_sequence' | 'refusal' | 'tool_use';
  stop_sequence: string | null;
  usage: {
    input_tokens: number;
    output_tokens: number;
    cache_creation_input_tokens?: number;
    cache_read_input_tokens?: number;
    cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  };
}

export type ModelContentBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'thinking'; thinking: string; signature: string };
