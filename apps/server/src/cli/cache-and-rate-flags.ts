/**
 * Triton's `--cache-config`, `--response-cache-byte-size`, `--rate-limit` and `--rate-limit-resource`
 * flags: parsing with Triton's messages, and what they configure in core.
 */
import { totalmem } from 'node:os';
import type { RateLimitResourceFlag } from '@tritium/core/server';

export class CacheOrRateFlagError extends Error {}

/** One `--cache-config <cache name>,<setting>=<value>` (Triton's ParseCacheConfigOption). */
export function parseCacheConfigOption(arg: string): { cache: string; setting: string; value: string } {
  const comma = arg.indexOf(',');
  if (comma <= 0) {
    throw new CacheOrRateFlagError(`No cache specified. --cache-config option format is <cache name>,<setting>=<value>. Got ${arg}`);
  }
  const eq = arg.indexOf('=', comma + 1);
  const setting = eq < 0 ? '' : arg.slice(comma + 1, eq);
  const value = eq < 0 ? '' : arg.slice(eq + 1);
  if (!setting || !value) throw new CacheOrRateFlagError(`--cache-config option format is '<cache name>,<setting>=<value>'. Got ${arg}`);
  return { cache: arg.slice(0, comma), setting, value };
}

/**
 * The response cache the collected `--cache-config` settings or the deprecated
 * `--response-cache-byte-size` configure (never both, as Triton), or undefined when none is:
 * Triton's `local` cache (its one setting is `size`) or its `redis` cache (settings checked when
 * the cache opens, by `@tritium/cache-redis`). One cache at most, as Triton.
 */
export function responseCacheOf(
  settings: Readonly<Record<string, Readonly<Record<string, string>>>>,
  byteSizeFlag: string | undefined,
): { readonly localBytes: number } | { readonly redis: Readonly<Record<string, string>> } | undefined {
  const caches = Object.keys(settings);
  if (byteSizeFlag !== undefined && caches.length > 0) {
    throw new CacheOrRateFlagError('Error: Incompatible flags --response-cache-byte-size and --cache-config both provided. Please provide one or the other.');
  }
  if (caches.length > 1) {
    throw new CacheOrRateFlagError('found multiple cache configurations, but only a single cache is currently supported');
  }
  for (const cache of caches) {
    if (cache !== 'local' && cache !== 'redis') throw new CacheOrRateFlagError(`--cache-config: unknown cache '${cache}' (Tritium has Triton's 'local' and 'redis' caches)`);
  }
  if (settings['redis']) return { redis: settings['redis'] };
  const size = byteSizeFlag ?? settings['local']?.['size'];
  const flag = byteSizeFlag !== undefined ? '--response-cache-byte-size' : '--cache-config local,size';
  for (const setting of Object.keys(settings['local'] ?? {})) {
    if (setting !== 'size') throw new CacheOrRateFlagError(`--cache-config: unknown setting '${setting}' for the local cache (expected size=<bytes>)`);
  }
  if (size === undefined) {
    if (caches.length > 0) throw new CacheOrRateFlagError("--cache-config local needs size=<bytes>, e.g. '--cache-config local,size=1048576'");
    return undefined;
  }
  if (!/^\d+$/.test(size) || !Number.isSafeInteger(Number(size)) || Number(size) < 1024) {
    throw new CacheOrRateFlagError(`invalid value for ${flag}: '${size}' (expected a byte count of at least 1024)`);
  }
  // Triton's local cache allocates its size up front and fails past the RAM; this one grows into it,
  // so a size beyond the machine's memory would only be found out by the OOM killer.
  if (Number(size) > totalmem()) {
    throw new CacheOrRateFlagError(`invalid value for ${flag}: '${size}' is more than this machine's memory (${totalmem()} bytes)`);
  }
  return { localBytes: Number(size) };
}

/** `--rate-limit off|execution_count` (Triton's, case-insensitive). */
export function parseRateLimitMode(v: string): 'off' | 'execution_count' {
  const s = v.toLowerCase();
  if (s !== 'off' && s !== 'execution_count') throw new CacheOrRateFlagError('invalid argument for --rate-limit');
  return s;
}

/** One `--rate-limit-resource <name>:<count>[:<device>]` (Triton's ParseRateLimiterResourceOption). */
export function parseRateLimitResource(arg: string): RateLimitResourceFlag {
  const error = `--rate-limit-resource option format is '<resource_name>:<count>:<device>' or '<resource_name>:<count>'. Got ${arg}`;
  const parts = arg.split(':');
  if (parts.length < 2 || parts.length > 3 || !parts[0]) throw new CacheOrRateFlagError(error);
  const num = (s: string): number => {
    if (!/^\d+$/.test(s) || !Number.isSafeInteger(Number(s)) || Number(s) > 0xffffffff) throw new CacheOrRateFlagError(error);
    return Number(s);
  };
  const count = num(parts[1]!);
  return parts.length === 3 ? { name: parts[0], count, device: num(parts[2]!) } : { name: parts[0], count };
}
