/**
 * `@tritium/cache-redis`: Triton's Redis response cache (`--cache-config redis,host=...,port=...`)
 * behind core's response cache store SPI (`@tritium/core/cache`). `tritium serve` loads it only when
 * `--cache-config redis` asks for it.
 *
 * @example
 * const cache = await RedisResponseCache.open({ host: '127.0.0.1', port: '6379' }, { log });
 * const server = new InferenceServer({ repositories: ['models'], backends, responseCache: cache });
 */
export { RedisResponseCache } from './redis-cache.ts';
export type { RedisCacheOptions } from './redis-cache.ts';
export { parseRedisSettings, RedisSettingsError, MISSING_ADDRESS, USERNAME_ENV, PASSWORD_ENV } from './redis-settings.ts';
export type { RedisCacheSettings, RedisTlsSettings } from './redis-settings.ts';
export { encodeEntry, decodeEntry, RedisEntryError } from './redis-entry.ts';
