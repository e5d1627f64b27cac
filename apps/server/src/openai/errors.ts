/**
 * OpenAI's error format on every failure of the OpenAI routes: `{"error": {"message", "type",
 * "param", "code"}}` with OpenAI's status codes, and Triton's OpenAI frontend's messages where it has
 * one (`Unknown model: <name>`, the restricted-API and request-size wording). Anything thrown below
 * (an InferError from core, a TransportError from the body reader) is mapped here, in one place.
 */
import { InferError } from '@tritium/core';
import { capErrorMessage, mapError, TransportError } from '../protocol/status.ts';

/** OpenAI's error types, by status. */
export type OpenAiErrorType = 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'not_found_error' | 'rate_limit_error' | 'server_error';

/** A refusal the OpenAI routes make themselves, with OpenAI's fields. */
export class OpenAiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
    readonly type: OpenAiErrorType = typeOfStatus(status),
  ) {
    super(message);
    this.name = 'OpenAiError';
  }
}

function typeOfStatus(status: number): OpenAiErrorType {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** A bad request naming the field (`param`, a JSON path such as `input[2]`). */
export function badRequest(message: string, param: string | null = null, code: string | null = null): OpenAiError {
  return new OpenAiError(400, message, code, param);
}

/** Triton's OpenAI frontend's answer for a model it does not serve. */
export function unknownModel(name: string): OpenAiError {
  return new OpenAiError(404, `Unknown model: ${name}`, 'model_not_found', 'model');
}

/** A model whose config declares a mapping that cannot work: the server's configuration is at fault. */
export function badMapping(model: string, message: string): OpenAiError {
  return new OpenAiError(500, `model '${model}' has an OpenAI mapping that cannot serve this request: ${message}`);
}

export interface OpenAiErrorReply {
  readonly status: number;
  readonly body: { error: { message: string; type: OpenAiErrorType; param: string | null; code: string | null } };
}

/**
 * The reply for anything thrown while serving an OpenAI route. Core's codes keep their HTTP status
 * (INVALID_ARG 400, NOT_FOUND 404, UNAVAILABLE 503 for a full queue or a model not ready, INTERNAL
 * 500), a request over a size bound is 413 (`content_too_large`, Triton's OpenAI code).
 */
export function openAiErrorReply(error: unknown): OpenAiErrorReply {
  if (error instanceof OpenAiError) {
    return { status: error.status, body: { error: { message: capErrorMessage(error.message), type: error.type, param: error.param, code: error.code } } };
  }
  const mapped = mapError(error);
  let code: string | null = null;
  if (error instanceof TransportError && mapped.httpStatus === 413) code = 'content_too_large';
  else if (InferError.is(error) && error.code === 'UNAVAILABLE') code = 'service_unavailable';
  return { status: mapped.httpStatus, body: { error: { message: mapped.message, type: typeOfStatus(mapped.httpStatus), param: null, code } } };
}
