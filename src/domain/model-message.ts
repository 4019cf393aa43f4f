/**
 * A model message as the interface document (section 2.4) and the Messages API define it. `refusal`
 * and `tool_use` are the Messages API's reasons that translated providers produce (OpenAI's
 * `content_filter` and `tool_calls`), as are `tool_use` blocks (its tool calls) and cached input tokens.
 */
export interface ModelMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  content: (
    | { type: 'text'; text: string }
    | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  )[];
  model: string;
  stop_reason: 'end_turn' | 'max_tokens' | 'stop_sequence' | 'refusal' | 'tool_use';
  stop_sequence: string | null;
  usage: { input_tokens: number; output_tokens: number; cache_read_input_tokens?: number };
}
