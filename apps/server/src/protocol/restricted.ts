/**
 * Triton's restricted APIs (`server:src/restricted_features.h`, `command_line_parser.cc`):
 * `--http-restricted-api=<apis>:<header>=<value>` and `--grpc-restricted-protocol=<protocols>:<key>=<value>`
 * gate categories of endpoints behind a header (gRPC: metadata `triton-grpc-protocol-<key>`) that
 * must carry exactly `<value>`. A request without it gets Triton's answer: HTTP 403
 * `This API is restricted, expecting header '<header>'`, gRPC UNAVAILABLE
 * `This protocol is restricted, expecting header 'triton-grpc-protocol-<key>'`.
 */
import { timingSafeEqual } from 'node:crypto';
import type { GRPCInferenceServiceMethods, HealthMethods } from '@tritium/client/proto';

/** Triton's category names, in its order (RESTRICTED_CATEGORY_NAMES). */
export const RESTRICTED_CATEGORIES = [
  'health',
  'metadata',
  'inference',
  'shared-memory',
  'model-config',
  'model-repository',
  'statistics',
  'trace',
  'logging',
] as const;

export type RestrictedCategory = (typeof RESTRICTED_CATEGORIES)[number];

/** The header (prefixed for gRPC, as configured) and value a category requires. */
export interface Restriction {
  readonly header: string;
  readonly value: string;
}

export type Restrictions = Partial<Record<RestrictedCategory, Restriction>>;

/** Triton's gRPC metadata prefix (grpc_server.h kRestrictedProtocolHeaderTemplate). */
export const GRPC_RESTRICTED_PREFIX = 'triton-grpc-protocol-';

/**
 * Adds one flag value to `into` (flags repeat, each category in one group only). Throws with Triton's
 * words: a malformed value, an unknown category, a category given twice.
 */
export function addRestriction(
  into: Restrictions,
  flag: 'http-restricted-api' | 'grpc-restricted-protocol',
  arg: string,
): void {
  const colon = arg.indexOf(':');
  const eq = colon < 0 ? -1 : arg.indexOf('=', colon + 1);
  const names = colon < 0 ? '' : arg.slice(0, colon);
  const key = eq < 0 ? '' : arg.slice(colon + 1, eq);
  const value = eq < 0 ? '' : arg.slice(eq + 1);
  if (!names || !key || !value) {
    throw new Error(`--${flag} option format is '<config name>:<setting>=<value>'. Got ${arg}`);
  }
  const kind = flag === 'http-restricted-api' ? 'api' : 'protocol';
  const header = flag === 'grpc-restricted-protocol' ? GRPC_RESTRICTED_PREFIX + key : key;
  for (const name of names.split(',')) {
    if (!(RESTRICTED_CATEGORIES as readonly string[]).includes(name)) {
      throw new Error(`unknown restricted ${kind} '${name}' (expected one of: ${RESTRICTED_CATEGORIES.join(', ')})`);
    }
    const category = name as RestrictedCategory;
    if (into[category]) throw new Error(`restricted ${kind} '${name}' can not be specified in multiple config groups`);
    into[category] = { header, value };
  }
}

function sameValue(actual: string, expected: string): boolean {
  const a = Buffer.from(actual);
  const b = Buffer.from(expected);
  // Constant time, so the value cannot be guessed byte by byte from response times.
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The restriction a request fails, if any. `headerOf` reads one header or metadata value by its
 * lower-case name (undefined when absent; a repeated header never matches).
 */
export function failedRestriction(
  restrictions: Restrictions,
  category: RestrictedCategory | undefined,
  headerOf: (name: string) => string | undefined,
): Restriction | undefined {
  if (!category) return undefined;
  const r = restrictions[category];
  if (!r) return undefined;
  // HTTP header names and gRPC metadata keys are case-insensitive (both arrive lower case).
  const actual = headerOf(r.header.toLowerCase());
  return actual !== undefined && sameValue(actual, r.value) ? undefined : r;
}

export const httpRestrictedMessage = (r: Restriction): string => `This API is restricted, expecting header '${r.header}'`;
export const grpcRestrictedMessage = (r: Restriction): string => `This protocol is restricted, expecting header '${r.header}'`;

/** A method of the services the gRPC transport serves. */
export type GrpcMethod = keyof GRPCInferenceServiceMethods | keyof HealthMethods;

/** Each gRPC method's category, as Triton's grpc_server.cc registers them. */
export const GRPC_METHOD_CATEGORY: Readonly<Record<GrpcMethod, RestrictedCategory>> = {
  ServerLive: 'health',
  ServerReady: 'health',
  ModelReady: 'health',
  Check: 'health',
  Watch: 'health',
  ServerMetadata: 'metadata',
  ModelMetadata: 'metadata',
  ModelConfig: 'model-config',
  ModelStatistics: 'statistics',
  TraceSetting: 'trace',
  LogSettings: 'logging',
  SystemSharedMemoryStatus: 'shared-memory',
  SystemSharedMemoryRegister: 'shared-memory',
  SystemSharedMemoryUnregister: 'shared-memory',
  CudaSharedMemoryStatus: 'shared-memory',
  CudaSharedMemoryRegister: 'shared-memory',
  CudaSharedMemoryUnregister: 'shared-memory',
  RepositoryIndex: 'model-repository',
  RepositoryModelLoad: 'model-repository',
  RepositoryModelUnload: 'model-repository',
  ModelInfer: 'inference',
  ModelStreamInfer: 'inference',
};
