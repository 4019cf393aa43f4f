/**
 * Request translation for OpenAI's Batch API: barge's stored model input (the Messages-API shape
 * the client sent, less `model`) becomes a `/v1/chat/completions` body and one line of the batch
 * input file (decisions.md, "The full request surface", translation for `openai`). Submit
 * validation has refused what this route cannot take (top_k, thinking, effort, document urls,
 * images in tool results), so every field here has a counterpart.
 */
import type {
  ChatCompletionContentPart,
  ChatCompletionContentPartText,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
  ChatCompletionToolChoiceOption,
} from 'openai/resources/chat/completions';
import type { ContentBlock, Message, ModelInput, TextBlock, Tool } from '../../domain/request-surface.js';

export const CHAT_COMPLETIONS = '/v1/chat/completions';

export function chatCompletionBody(model: string, input: ModelInput): ChatCompletionCreateParamsNonStreaming {
  const messages: ChatCompletionMessageParam[] = [];
  if (typeof input.system === 'string') messages.push({ role: 'system', content: input.system });
  else if (input.system?.length) messages.push({ role: 'system', content: input.system.map(textPart) });
  for (const message of input.messages) messages.push(...chatMessages(message));

  const body: ChatCompletionCreateParamsNonStreaming = { model, messages };
  if (input.max_tokens !== undefined) body.max_completion_tokens = input.max_tokens;
  if (input.stop_sequences !== undefined) body.stop = input.stop_sequences;
  if (input.temperature !== undefined) body.temperature = input.temperature;
  if (input.top_p !== undefined) body.top_p = input.top_p;
  if (input.tools !== undefined) body.tools = (input.tools as Tool[]).map(functionTool);
  const choice = input.tool_choice;
  if (choice !== undefined) {
    body.tool_choice = toolChoice(choice);
    if ('disable_parallel_tool_use' in choice && choice.disable_parallel_tool_use === true) {
      body.parallel_tool_calls = false;
    }
  }
  const format = input.output_config?.format;
  if (format !== undefined) {
    body.response_format = {
      type: 'json_schema',
      json_schema: { name: 'output', schema: format.schema, strict: true },
    };
  }
  return body;
}

function textPart(block: TextBlock): ChatCompletionContentPartText {
  return { type: 'text', text: block.text };
}

/**
 * One Messages-API turn as chat messages. A user turn's `tool_result` blocks become `tool` messages
 * ahead of the rest of the turn (chat completions wants them right after the assistant's calls);
 * an assistant turn's `tool_use` blocks become its `tool_calls`, and thinking is dropped.
 */
function chatMessages(message: Message): ChatCompletionMessageParam[] {
  if (typeof message.content === 'string') return [{ role: message.role, content: message.content }];
  const blocks = message.content as ContentBlock[];
  if (message.role === 'assistant') {
    const text: ChatCompletionContentPartText[] = [];
    const calls: ChatCompletionMessageFunctionToolCall[] = [];
    for (const block of blocks) {
      if (block.type === 'text') text.push(textPart(block));
      else if (block.type === 'tool_use') {
        calls.push({
          id: block.id,
          type: 'function',
          function: { name: block.name, arguments: JSON.stringify(block.input) },
        });
      }
    }
    return [
      { role: 'assistant', content: text.length > 0 ? text : null, ...(calls.length > 0 && { tool_calls: calls }) },
    ];
  }
  const out: ChatCompletionMessageParam[] = [];
  const parts: ChatCompletionContentPart[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case 'tool_result':
        out.push({
          role: 'tool',
          tool_call_id: block.tool_use_id,
          content:
            typeof block.content === 'string' || block.content === undefined
              ? (block.content ?? '')
              : block.content.flatMap((inner) => (inner.type === 'text' ? [textPart(inner)] : [])),
        });
        break;
      case 'text':
        parts.push(textPart(block));
        break;
      case 'image':
        parts.push({
          type: 'image_url',
          image_url: {
            url:
              block.source.type === 'url'
                ? block.source.url
                : `data:${block.source.media_type};base64,${block.source.data}`,
          },
        });
        break;
      case 'document':
        if (block.source.type === 'text') parts.push({ type: 'text', text: block.source.data });
        else if (block.source.type === 'base64') {
          parts.push({
            type: 'file',
            file: {
              filename: block.title ?? 'document.pdf',
              file_data: `data:application/pdf;base64,${block.source.data}`,
            },
          });
        }
        break;
    }
  }
  if (parts.length > 0) out.push({ role: 'user', content: parts });
  return out;
}

function functionTool(tool: Tool) {
  return {
    type: 'function' as const,
    function: {
      name: tool.name,
      ...(tool.description !== undefined && { description: tool.description }),
      parameters: tool.input_schema,
      ...(tool.strict !== undefined && { strict: tool.strict }),
    },
  };
}

function toolChoice(choice: NonNullable<ModelInput['tool_choice']>): ChatCompletionToolChoiceOption {
  switch (choice.type) {
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return { type: 'function', function: { name: choice.name } };
  }
}

/** One line of the batch input file (without its newline), from a stored request's JSON text. */
export function inputLine(model: string, customId: string, inputJson: string): string {
  const body = chatCompletionBody(model, JSON.parse(inputJson) as ModelInput);
  return JSON.stringify({ custom_id: customId, method: 'POST', url: CHAT_COMPLETIONS, body });
}
