import { InferError } from '@tritium/core';

/** A parsed `gs://` repository location. */
export interface GcsLocation {
  readonly bucket: string;
  /** Object-name prefix of the repository: '' or ending in `/`. */
  readonly prefix: string;
  readonly url: string;
}

/** Parses `gs://bucket/path` (Triton's GCSFileSystem::ParsePath; extra slashes dropped). */
export function parseGcsUrl(raw: string): GcsLocation {
  if (!raw.startsWith('gs://')) throw new InferError('INVALID_ARG', `not a GCS repository URL: '${raw}'`);
  const parts = raw.slice('gs://'.length).split('/').filter((p) => p !== '');
  if (parts.length === 0) throw new InferError('INVALID_ARG', `No bucket name found in path: ${raw}`);
  const bucket = parts.shift()!;
  const prefix = parts.length > 0 ? `${parts.join('/')}/` : '';
  return { bucket, prefix, url: `gs://${bucket}${prefix ? '/' + prefix.slice(0, -1) : ''}` };
}
