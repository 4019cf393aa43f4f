/**
 * Requests made of the full request surface (decisions.md, "The full request surface"), shared by
 * the HTTP validation tests and each provider's pipeline test: every field and every block of the
 * pinned list, in the shapes the Messages API takes.
 */

/** A PNG's and a PDF's first bytes in base64: what arrives is checked, not what they depict. */
export const PNG = 'iVBORw0KGgo=';
export const PDF = 'JVBERi0xLjQK';

export const CITY_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, country: { type: 'string', enum: ['FR', 'DE'] } },
  required: ['city'],
};

/** Everything Bedrock takes too: system blocks, cache marks, base64 and text media, thinking history. */
export function mediaParams(text: string) {
  return {
    max_tokens: 4096,
    system: [
      { type: 'text', text: 'You are a geographer.', cache_control: { type: 'ephemeral', ttl: '1h' } },
      { type: 'text', text: 'Be exact.' },
    ],
    thinking: { type: 'enabled', budget_tokens: 1024 },
    output_config: { effort: 'high' },
    messages: [
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          {
            type: 'document',
            source: { type: 'base64', media_type: 'application/pdf', data: PDF },
            title: 'atlas.pdf',
            context: 'An atlas.',
            citations: { enabled: true },
          },
          {
            type: 'document',
            source: { type: 'text', media_type: 'text/plain', data: 'Paris is in France.' },
            cache_control: { type: 'ephemeral' },
          },
          { type: 'text', text: 'Where is Paris?' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'It is in the atlas.', signature: 'c2lnbmF0dXJl' },
          { type: 'redacted_thinking', data: 'b3BhcXVl' },
          { type: 'text', text: 'In France.' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text, cache_control: { type: 'ephemeral', ttl: '5m' } }] },
    ],
  };
}

/** Every field and block of the list: tools, tool_choice, tool_use and tool_result, url sources, structured output. */
export function fullSurfaceParams(text: string) {
  const media = mediaParams(text);
  return {
    ...media,
    temperature: 1,
    stop_sequences: ['END'],
    tools: [
      {
        name: 'find_city',
        description: 'Finds a city.',
        input_schema: CITY_SCHEMA,
        strict: true,
        cache_control: { type: 'ephemeral' },
      },
      { type: 'custom', name: 'noop', input_schema: { type: 'object' } },
    ],
    tool_choice: { type: 'tool', name: 'find_city', disable_parallel_tool_use: true },
    output_config: { effort: 'high', format: { type: 'json_schema', schema: CITY_SCHEMA } },
    messages: [
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'url', url: 'https://example.com/map.png' } },
          { type: 'document', source: { type: 'url', url: 'https://example.com/atlas.pdf' } },
          { type: 'text', text: 'Find Paris.' },
        ],
      },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_01', name: 'find_city', input: { city: 'Paris' } }],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01',
            content: [
              { type: 'text', text: 'Paris, FR' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
            ],
            is_error: false,
          },
        ],
      },
      ...media.messages,
    ],
  };
}
