/**
 * OpenAI's chat completions and completions requests, checked field by field. What a generating
 * model can take is the prompt (or the chat messages), `stream`, and the controls Triton's LLM
 * models name (`max_tokens`, `temperature`, `top_p`, `seed`); what no model here can honour (more
 * than one choice, logit bias, log probabilities, tools, stop sequences, suffix, echo) is refused
 * with Triton's OpenAI frontend's message where it has one, never silently ignored.
 */
import { badRequest } from './errors.ts';
import { bodyObject, describe, requestedModel } from './embeddings-request.ts';

export interface ChatMessage {
  readonly role: string;
  readonly content: string;
}

export interface GenerationRequest {
  readonly api: 'chat' | 'completions';
  readonly model: string;
  /** The completion prompt; for chat, absent (the messages are the prompt). */
  readonly prompt?: string;
  readonly messages?: readonly ChatMessage[];
  readonly stream: boolean;
  readonly includeUsage: boolean;
  readonly maxTokens?: number;
  readonly temperature?: number;
  readonly topP?: number;
  readonly seed?: number;
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

export function parseChatRequest(raw: unknown): GenerationRequest {
  const body = bodyObject(raw);
  const model = requestedModel(body);
  const messages = body['messages'];
  if (!Array.isArray(messages) || messages.length === 0) throw badRequest(`'messages' must be a non-empty array, got ${describe(messages)}`, 'messages');
  if (body['logit_bias'] !== undefined && body['logit_bias'] !== null) throw badRequest('logit bias is not currently supported', 'logit_bias');
  if (body['logprobs'] === true || (body['top_logprobs'] !== undefined && body['top_logprobs'] !== null)) {
    throw badRequest('logprobs are not supported by this server', 'logprobs');
  }
  for (const key of ['tools', 'tool_choice', 'functions', 'function_call']) {
    if (body[key] !== undefined && body[key] !== null) throw badRequest(`tool calling is not supported by this server ('${key}')`, key);
  }
  const maxTokens = body['max_completion_tokens'] ?? body['max_tokens'];
  return {
    api: 'chat',
    model,
    messages: messages.map((m, i) => chatMessage(m, i)),
    ...common(body, maxTokens, body['max_completion_tokens'] !== undefined && body['max_completion_tokens'] !== null ? 'max_completion_tokens' : 'max_tokens'),
  };
}

export function parseCompletionRequest(raw: unknown): GenerationRequest {
  const body = bodyObject(raw);
  const model = requestedModel(body);
  const prompt = body['prompt'];
  if (prompt === undefined || prompt === null || prompt === '' || (Array.isArray(prompt) && prompt.length === 0)) throw badRequest('prompt must be non-empty', 'prompt');
  if (typeof prompt !== 'string') throw badRequest('only single string input is supported', 'prompt');
  if (body['suffix'] !== undefined && body['suffix'] !== null) throw badRequest('suffix is not currently supported', 'suffix');
  const bestOf = body['best_of'];
  if (typeof bestOf === 'number' && bestOf > 1) {
    throw badRequest(`Received best_of=${bestOf}, but only single choice (best_of=1) is currently supported`, 'best_of');
  }
  if (body['logit_bias'] !== undefined && body['logit_bias'] !== null) throw badRequest('logit bias is not supported', 'logit_bias');
  if (typeof body['logprobs'] === 'number' && body['logprobs'] > 0) throw badRequest('logprobs are not supported by this server', 'logprobs');
  if (body['echo'] === true) throw badRequest('echo is not supported by this server', 'echo');
  return { api: 'completions', model, prompt, ...common(body, body['max_tokens'], 'max_tokens') };
}

/** The fields both APIs share. */
function common(body: Record<string, unknown>, maxTokens: unknown, maxTokensKey: string): Omit<GenerationRequest, 'api' | 'model' | 'prompt' | 'messages'> {
  const n = body['n'];
  if (n !== undefined && n !== null && n !== 1) {
    throw badRequest(`Received n=${describe(n)}, but only single choice (n=1) is currently supported`, 'n');
  }
  const stop = body['stop'];
  if (stop !== undefined && stop !== null && !(Array.isArray(stop) && stop.length === 0)) throw badRequest('stop sequences are not supported by this server', 'stop');
  const stream = body['stream'] ?? false;
  if (typeof stream !== 'boolean') throw badRequest(`'stream' must be a boolean, got ${describe(stream)}`, 'stream');
  const options = body['stream_options'];
  if (options !== undefined && options !== null) {
    if (!stream) throw badRequest('`stream_options` can only be used when `stream` is True', 'stream_options');
    if (typeof options !== 'object' || Array.isArray(options)) throw badRequest(`'stream_options' must be an object, got ${describe(options)}`, 'stream_options');
  }
  const includeUsage = (options as { include_usage?: unknown } | null | undefined)?.include_usage === true;
  return {
    stream,
    includeUsage,
    ...optionalNumber(maxTokensKey, maxTokens, 'maxTokens', (v) => Number.isSafeInteger(v) && v >= 1 && v <= 0x7fffffff, 'a positive integer'),
    ...optionalNumber('temperature', body['temperature'], 'temperature', (v) => v >= 0 && v <= 2, 'a number from 0 to 2'),
    ...optionalNumber('top_p', body['top_p'], 'topP', (v) => v >= 0 && v <= 1, 'a number from 0 to 1'),
    ...optionalNumber('seed', body['seed'], 'seed', (v) => Number.isSafeInteger(v) && v >= 0, 'a non-negative integer'),
  };
}

function optionalNumber(key: string, value: unknown, field: string, valid: (v: number) => boolean, what: string): Record<string, number> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'number' || !valid(value)) throw badRequest(`'${key}' must be ${what}, got ${describe(value)}`, key);
  return { [field]: value };
}

/** A message's text: a string, or the text parts of an array of content parts. */
function chatMessage(raw: unknown, i: number): ChatMessage {
  const path = `messages[${i}]`;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw badRequest(`'${path}' must be an object, got ${describe(raw)}`, path);
  const { role, content } = raw as { role?: unknown; content?: unknown };
  if (typeof role !== 'string' || !ROLES.has(role)) {
    throw badRequest(`'${path}.role' must be one of ${[...ROLES].join(', ')}, got ${describe(role)}`, `${path}.role`);
  }
  if (typeof content === 'string') return { role, content };
  if (content === null || content === undefined) {
    if (role === 'assistant') return { role, content: '' };
    throw badRequest(`'${path}.content' is required`, `${path}.content`);
  }
  if (!Array.isArray(content)) throw badRequest(`'${path}.content' must be a string or an array of text parts, got ${describe(content)}`, `${path}.content`);
  const texts = content.map((part: unknown, j) => {
    const p = part as { type?: unknown; text?: unknown } | null;
    if (p?.type !== 'text' || typeof p.text !== 'string') {
      throw badRequest(`'${path}.content[${j}]' must be a text part ({"type": "text", "text": ...}); other parts are not supported`, `${path}.content[${j}]`);
    }
    return p.text;
  });
  return { role, content: texts.join('') };
}
