/**
 * `--model-repository` values to repository sources, bound by URL scheme (Triton's): `s3://` (S3 and
 * S3-compatible endpoints), `as://` (Azure Blob Storage), `gs://` (Google Cloud Storage); anything
 * else is a local folder. The providers live in the optional package `@tritium/repository-cloud`,
 * imported when the first object-store repository is read (optional/optional-package.ts); each
 * provider's SDK loads only when a repository of that provider is used.
 */
import type { RepositoryCallOptions, RepositoryEntry, RepositoryFetch, RepositorySource } from '@tritium/core/repository';
import { lazyImport, OPTIONAL_PACKAGES } from './optional/optional-package.ts';

type CloudModule = typeof import('@tritium/repository-cloud');

const SOURCES_BY_SCHEME: Readonly<Record<string, (cloud: CloudModule, url: string) => RepositorySource>> = Object.freeze({
  's3://': (cloud, url) => cloud.s3RepositorySource(url),
  'as://': (cloud, url) => cloud.azureRepositorySource(url),
  'gs://': (cloud, url) => cloud.gcsRepositorySource(url),
});

const cloudModule = lazyImport(OPTIONAL_PACKAGES.cloud, 'an object-store --model-repository (s3://, as://, gs://)', () => import('@tritium/repository-cloud'));

/** An object-store source whose provider is created on first use, from the loaded package. */
class DeferredSource implements RepositorySource {
  private source: Promise<RepositorySource> | undefined;

  constructor(
    readonly url: string,
    private readonly create: (cloud: CloudModule, url: string) => RepositorySource,
  ) {}

  private inner(): Promise<RepositorySource> {
    this.source ??= cloudModule().then(
      (cloud) => this.create(cloud, this.url),
      (err: unknown) => {
        this.source = undefined;
        throw err;
      },
    );
    return this.source;
  }

  async list(dir: string, options?: RepositoryCallOptions & { readonly recursive?: boolean }): Promise<RepositoryEntry[]> {
    return (await this.inner()).list(dir, options);
  }

  async stat(path: string, options?: RepositoryCallOptions): Promise<RepositoryEntry | undefined> {
    return (await this.inner()).stat(path, options);
  }

  async fetch(entry: RepositoryEntry, options?: RepositoryCallOptions): Promise<RepositoryFetch> {
    return (await this.inner()).fetch(entry, options);
  }

  async close(): Promise<void> {
    const source = await this.source?.catch(() => undefined);
    await source?.close?.();
  }
}

/** One entry per `--model-repository`: a path (local) or the object store's source. */
export function repositorySources(repositories: readonly string[]): (string | RepositorySource)[] {
  return repositories.map((r) => {
    const scheme = Object.keys(SOURCES_BY_SCHEME).find((s) => r.startsWith(s));
    return scheme ? new DeferredSource(r, SOURCES_BY_SCHEME[scheme]!) : r;
  });
}
