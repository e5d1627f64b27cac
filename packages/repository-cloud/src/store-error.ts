import { InferError } from '@tritium/core';

/**
 * One wording for every failure talking to an object store: what was being done, the URL (never a
 * credential: URLs carry none), the provider's error code and message. `secrets` are scrubbed from
 * the message in case a provider ever echoes one.
 */
export function storeError(action: string, url: string, err: unknown, secrets: readonly string[] = []): InferError {
  if (InferError.is(err)) return err;
  const e = err as { name?: string; code?: string; Code?: string; message?: string; statusCode?: number; $metadata?: { httpStatusCode?: number } };
  const code = e.Code ?? e.code ?? e.name ?? 'Error';
  const status = e.$metadata?.httpStatusCode ?? e.statusCode;
  let message = (e.message ?? String(err)).split('\n')[0]!;
  if (message === 'UnknownError' && status !== undefined) message = `HTTP ${status}`;
  for (const secret of secrets) if (secret.length >= 4) message = message.split(secret).join('<redacted>');
  return new InferError('INTERNAL', `failed to ${action} ${url}: ${code}: ${message}`);
}

/** `base` and `path` joined with one slash (either may be empty). */
export function joinUrl(base: string, path: string): string {
  if (path === '') return base;
  return `${base.replace(/\/+$/, '')}/${path}`;
}
