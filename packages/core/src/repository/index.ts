/**
 * `@tritium/core/repository`: the repository-source SPI (where model repositories are read from),
 * the local file-system source, the path rule every source keeps, and the config codec
 * `InferenceServer` reads `config.pbtxt` with.
 */
export type {
  RepositorySource,
  RepositoryEntry,
  RepositoryEntryKind,
  RepositoryFetch,
  RepositoryCallOptions,
} from './source/repository-source.ts';
export { localRepositorySource } from './source/local-source.ts';
export { checkRelativePath } from './source/relative-path.ts';
export { defaultConfigCodec } from './config-codec.ts';
export type { ConfigCodec, NormalizeContext } from './config-codec.ts';
