import { InferError } from '@tritium/core';

/** A parsed `as://` repository location, Triton's syntax. */
export interface AzureLocation {
  /** Storage account (from `<account>` or `<account>.blob.core.windows.net`). */
  readonly account: string;
  readonly container: string;
  /** Blob-name prefix of the repository: '' or ending in `/`. */
  readonly prefix: string;
  /** The URL as messages print it (no query string: a SAS token there is a secret). */
  readonly url: string;
}

/** Triton's AS_URL_PATTERN (core:src/filesystem/implementations/as.h), query part excluded. */
const AS_URL = /^as:\/\/([^/]+)\/([^/?]+)(?:\/([^?]*))?$/;

/** Parses `as://account/container/path`. A query string (`?sv=…` SAS token) is refused, unprinted. */
export function parseAzureUrl(raw: string): AzureLocation {
  const q = raw.indexOf('?');
  if (q >= 0) {
    throw new InferError('INVALID_ARG', `Azure repository URL '${raw.slice(0, q)}?…' must not carry a query string; give credentials through AZURE_STORAGE_* or TRITON_CLOUD_CREDENTIAL_PATH`);
  }
  const m = AS_URL.exec(raw);
  if (!m) throw new InferError('INVALID_ARG', `Invalid azure storage path: ${raw}`);
  const host = m[1]!;
  const dot = host.lastIndexOf('.blob.core.windows.net');
  const account = dot >= 0 ? host.slice(0, dot) : host;
  const parts = (m[3] ?? '').split('/').filter((p) => p !== '');
  const prefix = parts.length > 0 ? `${parts.join('/')}/` : '';
  return { account, container: m[2]!, prefix, url: `as://${host}/${m[2]!}${prefix ? '/' + prefix.slice(0, -1) : ''}` };
}
