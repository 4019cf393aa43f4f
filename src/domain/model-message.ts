/**
 * A model message as the interface document (section 2.4) and the Messages API define it. `refusal`
 * and `tool_use` are the Messages API's reasons that translated providers produce (OpenAI's
 * `content_filter` and `tool_calls`).
 */
export interface ModelMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  content: { type: 'text'; text: string }[];
  model: string;
  stop_reason: 'end_turn' | 'max_tokens' | 'stop_sequence' | 'refusal' | 'tool_use';
  stop_sequence: string | null;
  usage: { input_tokens: number; output_tokens: number };
}
