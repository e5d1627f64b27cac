/** `@tritium/cache-redis/testing`: a real redis-server for tests of the Redis response cache. */
export { startRedisServer, redisServerPath, REDIS_SKIP_REASON } from './redis-server.ts';
export type { RedisServer } from './redis-server.ts';
