/**
 * @tritium/repository-cloud: model repositories in object storage, as repository sources for core
 * (`InferenceServerOptions.repositories`). Triton's URL syntax and credentials; each provider's SDK
 * is loaded only when a repository of that provider is used.
 *
 * @example
 * import { InferenceServer } from '@tritium/core';
 * import { s3RepositorySource } from '@tritium/repository-cloud';
 * const server = new InferenceServer({
 *   repositories: [s3RepositorySource('s3://127.0.0.1:9000/models/repo')],
 *   backends: [onnxBackend()],
 *   repositoryCacheDir: '/var/cache/tritium',
 * });
 */
export { s3RepositorySource } from './s3-source.ts';
export type { S3SourceOptions } from './s3-source.ts';
export { parseS3Url } from './s3-url.ts';
export type { S3Location } from './s3-url.ts';
export { azureRepositorySource } from './azure-source.ts';
export type { AzureSourceOptions } from './azure-source.ts';
export { parseAzureUrl } from './azure-url.ts';
export type { AzureLocation } from './azure-url.ts';
export { gcsRepositorySource } from './gcs-source.ts';
export type { GcsSourceOptions } from './gcs-source.ts';
export { parseGcsUrl } from './gcs-url.ts';
export type { GcsLocation } from './gcs-url.ts';
export { credentialFromFile } from './credential-file.ts';
