/**
 * OpenAI's embeddings request (`POST /v1/embeddings`), checked field by field: `model`, `input` (a
 * string, an array of strings, an array of token ids, or an array of token-id arrays, at most
 * MAX_EMBEDDING_INPUTS of them, none empty), `encoding_format` (`float` or `base64`), `dimensions`
 * (a positive integer) and `user` (accepted and not used). Other fields are ignored, as OpenAI's
 * clients add their own.
 */
import { badRequest } from './errors.ts';

/** OpenAI's bound on the inputs of one request. */
export const MAX_EMBEDDING_INPUTS = 2048;

export type EmbeddingInputs = { readonly kind: 'text'; readonly texts: readonly string[] } | { readonly kind: 'tokens'; readonly rows: readonly (readonly number[])[] };

export interface EmbeddingsRequest {
  readonly model: string;
  readonly inputs: EmbeddingInputs;
  readonly encoding: 'float' | 'base64';
  readonly dimensions?: number;
}

/** The model name every OpenAI request carries. */
export function requestedModel(body: Record<string, unknown>): string {
  const model = body['model'];
  if (model === undefined) throw badRequest("you must provide a model parameter ('model')", 'model');
  if (typeof model !== 'string' || model === '') throw badRequest(`'model' must be a non-empty string, got ${describe(model)}`, 'model');
  return model;
}

/** The request body as an object (anything else is a 400). */
export function bodyObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('the request body must be a JSON object');
  return body as Record<string, unknown>;
}

export function parseEmbeddingsRequest(raw: unknown): EmbeddingsRequest {
  const body = bodyObject(raw);
  const model = requestedModel(body);
  const format = body['encoding_format'] ?? 'float';
  if (format !== 'float' && format !== 'base64') {
    throw badRequest(`'encoding_format' must be 'float' or 'base64', got ${describe(format)}`, 'encoding_format');
  }
  const dimensions = body['dimensions'];
  if (dimensions !== undefined && dimensions !== null && !(Number.isSafeInteger(dimensions) && (dimensions as number) >= 1)) {
    throw badRequest(`'dimensions' must be a positive integer, got ${describe(dimensions)}`, 'dimensions');
  }
  const user = body['user'];
  if (user !== undefined && user !== null && typeof user !== 'string') throw badRequest(`'user' must be a string, got ${describe(user)}`, 'user');
  return {
    model,
    inputs: parseInputs(body['input']),
    encoding: format,
    ...(typeof dimensions === 'number' ? { dimensions } : {}),
  };
}

function parseInputs(input: unknown): EmbeddingInputs {
  if (input === undefined) throw badRequest("you must provide an input ('input')", 'input');
  if (typeof input === 'string') {
    if (input === '') throw badRequest("'input' cannot be an empty string", 'input');
    return { kind: 'text', texts: [input] };
  }
  if (!Array.isArray(input)) throw badRequest(`'input' must be a string, an array of strings or an array of token ids, got ${describe(input)}`, 'input');
  if (input.length === 0) throw badRequest("'input' cannot be an empty array", 'input');
  if (input.length > MAX_EMBEDDING_INPUTS) {
    throw badRequest(`'input' has ${input.length} items; at most ${MAX_EMBEDDING_INPUTS} are allowed in one request`, 'input');
  }
  const first = input[0];
  if (typeof first === 'number') return { kind: 'tokens', rows: [tokenRow(input, 'input')] };
  if (typeof first === 'string') {
    input.forEach((text, i) => {
      if (typeof text !== 'string') throw badRequest(`'input[${i}]' must be a string like the items before it, got ${describe(text)}`, `input[${i}]`);
      if (text === '') throw badRequest(`'input[${i}]' cannot be an empty string`, `input[${i}]`);
    });
    return { kind: 'text', texts: input as string[] };
  }
  if (Array.isArray(first)) return { kind: 'tokens', rows: input.map((row, i) => tokenRow(row, `input[${i}]`)) };
  throw badRequest(`'input[0]' must be a string, a token id or an array of token ids, got ${describe(first)}`, 'input[0]');
}

/** One input's token ids: a non-empty array of non-negative integers. */
function tokenRow(row: unknown, path: string): number[] {
  if (!Array.isArray(row)) throw badRequest(`'${path}' must be an array of token ids, got ${describe(row)}`, path);
  if (row.length === 0) throw badRequest(`'${path}' cannot be an empty array of token ids`, path);
  for (let j = 0; j < row.length; j++) {
    const id: unknown = row[j];
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) {
      throw badRequest(`'${path}[${j}]' must be a token id (a non-negative integer), got ${describe(id)}`, `${path}[${j}]`);
    }
  }
  return row as number[];
}

/** A value as an error message shows it: short, never the whole of a large input. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 40)}...` : text;
}
