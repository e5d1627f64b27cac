import { InferError } from '@tritium/core';

/** A parsed `s3://` repository location, Triton's syntax. */
export interface S3Location {
  /** `http://host:port` / `https://host:port` for an S3-compatible endpoint; undefined for AWS. */
  readonly endpoint?: string;
  readonly bucket: string;
  /** Key prefix of the repository: '' (bucket root) or ending in `/`. */
  readonly prefix: string;
  /** The URL cleaned of extra slashes, as messages print it. */
  readonly url: string;
}

const ENDPOINT = /^[0-9a-zA-Z.-]+:[0-9]+$/;

/**
 * Parses Triton's S3 repository syntax (core:src/filesystem/implementations/s3.h):
 * `s3://bucket/path` (AWS), `s3://host:port/bucket/path` (an S3-compatible endpoint over HTTP),
 * `s3://https://host:port/bucket/path` (the same over HTTPS). Extra slashes are dropped as Triton's
 * CleanPath drops them.
 */
export function parseS3Url(raw: string): S3Location {
  if (!raw.startsWith('s3://')) throw new InferError('INVALID_ARG', `not an S3 repository URL: '${raw}'`);
  let rest = raw.slice('s3://'.length);
  let scheme: 'http' | 'https' = 'http';
  if (rest.startsWith('https://')) {
    scheme = 'https';
    rest = rest.slice('https://'.length);
  } else if (rest.startsWith('http://')) rest = rest.slice('http://'.length);
  const parts = rest.split('/').filter((p) => p !== '');
  if (parts.length === 0) throw new InferError('INVALID_ARG', `Invalid bucket name: '${raw}'`);
  let endpoint: string | undefined;
  if (ENDPOINT.test(parts[0]!)) {
    endpoint = `${scheme}://${parts.shift()!}`;
    if (parts.length === 0) throw new InferError('INVALID_ARG', `No bucket name found in path: ${raw}`);
  }
  const bucket = parts.shift()!;
  const prefix = parts.length > 0 ? `${parts.join('/')}/` : '';
  const host = endpoint ? `${scheme === 'https' ? 'https://' : ''}${endpoint.replace(/^https?:\/\//, '')}/` : '';
  return { endpoint, bucket, prefix, url: `s3://${host}${bucket}${prefix ? '/' + prefix.slice(0, -1) : ''}` };
}
