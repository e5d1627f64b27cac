/**
 * `--cache-config redis,<setting>=<value>` settings, with the names, meanings and defaults of
 * Triton's redis cache: `host` and `port` (required), `user`, `password` (else the
 * TRITONCACHE_REDIS_USERNAME / TRITONCACHE_REDIS_PASSWORD environment variables), `db`,
 * `connect_timeout`, `socket_timeout`, `pool_size`, `wait_timeout`, and TLS: `tls_enabled`, `cert`,
 * `key`, `cacert`, `cacert_dir`, `sni`.
 *
 * Where Triton waits forever (its timeouts default to 0), Tritium bounds every Redis call: the
 * timeouts default to the values below and 0 is refused. `max_entry_bytes` (beyond Triton) bounds
 * what one cached response may hold in Redis.
 */
export class RedisSettingsError extends Error {}

export interface RedisTlsSettings {
  /** PEM file paths, read when the cache opens. */
  readonly cert?: string;
  readonly key?: string;
  readonly cacert?: string;
  readonly cacertDir?: string;
  readonly sni?: string;
}

export interface RedisCacheSettings {
  readonly host: string;
  readonly port: number;
  readonly user?: string;
  readonly password?: string;
  readonly db: number;
  readonly connectTimeoutMs: number;
  readonly socketTimeoutMs: number;
  readonly poolSize: number;
  readonly waitTimeoutMs: number;
  /** Present when `tls_enabled=true`. */
  readonly tls?: RedisTlsSettings;
  readonly maxEntryBytes: number;
  /** TLS settings given without `tls_enabled=true`: Triton reads them only with TLS on, so they do nothing. */
  readonly ignored?: readonly string[];
}

export const USERNAME_ENV = 'TRITONCACHE_REDIS_USERNAME';
export const PASSWORD_ENV = 'TRITONCACHE_REDIS_PASSWORD';

/** Tritium's bounds where Triton's defaults wait forever. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 1000;
export const DEFAULT_SOCKET_TIMEOUT_MS = 500;
/** Triton's pool wait default. */
export const DEFAULT_WAIT_TIMEOUT_MS = 1000;
export const MAX_TIMEOUT_MS = 60_000;
export const MAX_POOL_SIZE = 64;
export const DEFAULT_MAX_ENTRY_BYTES = 1 << 20;
/** Redis refuses bulk strings past its proto-max-bulk-len (512 MB by default). */
export const MAX_MAX_ENTRY_BYTES = 512 * 1024 * 1024;

const KNOWN = [
  'host',
  'port',
  'user',
  'password',
  'db',
  'connect_timeout',
  'socket_timeout',
  'pool_size',
  'wait_timeout',
  'tls_enabled',
  'cert',
  'key',
  'cacert',
  'cacert_dir',
  'sni',
  'max_entry_bytes',
] as const;

/** Triton's words when host or port is missing (redis_cache.cc RedisCache::Create). */
export const MISSING_ADDRESS =
  "Failed to initialize RedisCache, didn't specify address. Must at a minimum specify 'host' and 'port' in the configuration - e.g. " +
  'tritonserver --cache-config redis,host=redis --cache-config redis,port=6379 --model-repository=/models ...';

function integer(settings: Readonly<Record<string, string>>, name: string, fallback: number, min: number, max: number, why = ''): number {
  const raw = settings[name];
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new RedisSettingsError(`invalid value for --cache-config redis,${name}: '${raw}' (expected an integer from ${min} to ${max}${why})`);
  }
  return Number(raw);
}

function timeout(settings: Readonly<Record<string, string>>, name: string, fallback: number): number {
  return integer(settings, name, fallback, 1, MAX_TIMEOUT_MS, ' milliseconds; Tritium bounds every Redis call, so 0 (wait forever) is refused');
}

/** Parses the settings collected for the `redis` cache; `env` supplies the credential variables. */
export function parseRedisSettings(settings: Readonly<Record<string, string>>, env: NodeJS.ProcessEnv = process.env): RedisCacheSettings {
  for (const name of Object.keys(settings)) {
    if (!(KNOWN as readonly string[]).includes(name)) {
      throw new RedisSettingsError(`--cache-config: unknown setting '${name}' for the redis cache (expected one of ${KNOWN.join(', ')})`);
    }
  }
  const host = settings['host'];
  if (!host || settings['port'] === undefined) throw new RedisSettingsError(MISSING_ADDRESS);
  const port = integer(settings, 'port', 0, 1, 65535);
  const tlsFlag = settings['tls_enabled'];
  if (tlsFlag !== undefined && tlsFlag !== 'true' && tlsFlag !== 'false') {
    throw new RedisSettingsError(`invalid value for --cache-config redis,tls_enabled: '${tlsFlag}' (expected true or false)`);
  }
  // Triton reads the TLS settings only under tls_enabled=true and ignores them otherwise: a Triton
  // command line with them starts here too, and the opener warns that they do nothing.
  const tlsOnly = ['cert', 'key', 'cacert', 'cacert_dir', 'sni'].filter((k) => settings[k] !== undefined);
  const ignored = tlsFlag === 'true' ? [] : tlsOnly;
  if (tlsFlag === 'true' && (settings['cert'] === undefined) !== (settings['key'] === undefined)) {
    throw new RedisSettingsError('--cache-config redis: cert and key go together (a client certificate and its key)');
  }
  const user = settings['user'] ?? env[USERNAME_ENV];
  const password = settings['password'] ?? env[PASSWORD_ENV];
  return {
    host,
    port,
    ...(user ? { user } : {}),
    ...(password ? { password } : {}),
    db: integer(settings, 'db', 0, 0, 2 ** 31 - 1),
    connectTimeoutMs: timeout(settings, 'connect_timeout', DEFAULT_CONNECT_TIMEOUT_MS),
    socketTimeoutMs: timeout(settings, 'socket_timeout', DEFAULT_SOCKET_TIMEOUT_MS),
    poolSize: integer(settings, 'pool_size', 1, 1, MAX_POOL_SIZE),
    waitTimeoutMs: timeout(settings, 'wait_timeout', DEFAULT_WAIT_TIMEOUT_MS),
    ...(tlsFlag === 'true'
      ? {
          tls: {
            ...(settings['cert'] ? { cert: settings['cert'] } : {}),
            ...(settings['key'] ? { key: settings['key'] } : {}),
            ...(settings['cacert'] ? { cacert: settings['cacert'] } : {}),
            ...(settings['cacert_dir'] ? { cacertDir: settings['cacert_dir'] } : {}),
            ...(settings['sni'] ? { sni: settings['sni'] } : {}),
          },
        }
      : {}),
    maxEntryBytes: integer(settings, 'max_entry_bytes', DEFAULT_MAX_ENTRY_BYTES, 1024, MAX_MAX_ENTRY_BYTES),
    ...(ignored.length > 0 ? { ignored } : {}),
  };
}
