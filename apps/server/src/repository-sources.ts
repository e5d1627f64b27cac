/**
 * `--model-repository` values to repository sources, bound by URL scheme (Triton's): `s3://` (S3 and
 * S3-compatible endpoints), `as://` (Azure Blob Storage), `gs://` (Google Cloud Storage); anything
 * else is a local folder. Each provider's SDK loads only when a repository of that provider is used.
 */
import type { RepositorySource } from '@tritium/core';
import { azureRepositorySource, gcsRepositorySource, s3RepositorySource } from '@tritium/repository-cloud';

const SOURCES_BY_SCHEME: Readonly<Record<string, (url: string) => RepositorySource>> = Object.freeze({
  's3://': (url) => s3RepositorySource(url),
  'as://': (url) => azureRepositorySource(url),
  'gs://': (url) => gcsRepositorySource(url),
});

/** One entry per `--model-repository`: a path (local) or the object store's source. */
export function repositorySources(repositories: readonly string[]): (string | RepositorySource)[] {
  return repositories.map((r) => {
    const scheme = Object.keys(SOURCES_BY_SCHEME).find((s) => r.startsWith(s));
    return scheme ? SOURCES_BY_SCHEME[scheme]!(r) : r;
  });
}
