/**
 * Triton's `redis` response cache: responses live in Redis (one hash per key, redis-entry.ts), so
 * every replica pointed at the same Redis shares their hits. Redis evicts by its own policy
 * (`maxmemory` and `maxmemory-policy`), as with Triton; entries carry no expiry.
 *
 * A Redis outage never fails an inference. Every call is bounded (`socket_timeout`), commands are
 * never queued while a connection is down (ioredis' offline queue is off and nothing is retried),
 * and whatever fails is a miss (lookup) or an insert not made: the first failure of an outage is
 * logged as a warning, each one is counted (`errors()`), and the connection keeps retrying in the
 * background; the recovery is logged too.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ConnectionOptions } from 'node:tls';
import { Redis } from 'ioredis';
import { silentLogger, type Logger } from '@tritium/core';
import type { CachedResponse, CacheInsertOutcome, CacheStoreErrors, ResponseCacheStore } from '@tritium/core/cache';
import { decodeEntry, encodeEntry } from './redis-entry.ts';
import { parseRedisSettings, type RedisCacheSettings, type RedisTlsSettings } from './redis-settings.ts';

export interface RedisCacheOptions {
  readonly log?: Logger;
  /** Where TRITONCACHE_REDIS_USERNAME / TRITONCACHE_REDIS_PASSWORD are read (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
}

/** Refusals that retrying cannot cure: the cache fails to open on them rather than serve misses. */
const FATAL_REPLY = /^(WRONGPASS|NOAUTH|NOPERM)\b|invalid password|DB index is out of range|invalid DB index/i;

/** Most CA files read from `cacert_dir`, and the most bytes of one (a CA certificate is a few KB). */
const MAX_CA_FILES = 256;
const MAX_PEM_BYTES = 1 << 20;

async function readPem(file: string, setting: string): Promise<Buffer> {
  try {
    const bytes = await readFile(file);
    if (bytes.length > MAX_PEM_BYTES) throw new Error(`larger than ${MAX_PEM_BYTES} bytes`);
    return bytes;
  } catch (err) {
    throw new Error(`cannot read ${setting} '${file}': ${(err as Error).message}`);
  }
}

async function tlsOptions(tls: RedisTlsSettings, host: string): Promise<ConnectionOptions> {
  const ca: Buffer[] = [];
  if (tls.cacert) ca.push(await readPem(tls.cacert, 'cacert'));
  if (tls.cacertDir) {
    const names = (await readdir(tls.cacertDir, { withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name).sort();
    if (names.length > MAX_CA_FILES) throw new Error(`cacert_dir '${tls.cacertDir}' holds ${names.length} files, more than ${MAX_CA_FILES}`);
    for (const n of names) ca.push(await readPem(path.join(tls.cacertDir, n), 'cacert_dir file'));
  }
  return {
    ...(ca.length > 0 ? { ca } : {}),
    ...(tls.cert ? { cert: await readPem(tls.cert, 'cert') } : {}),
    ...(tls.key ? { key: await readPem(tls.key, 'key') } : {}),
    servername: tls.sni ?? host,
  };
}

export class RedisResponseCache implements ResponseCacheStore {
  readonly name = 'redis';
  private next = 0;
  private failed = { lookup: 0, insert: 0 };
  /** Failures since the last success; the first of a run is logged, the recovery too. */
  private outage = 0;
  private closed = false;

  private constructor(
    private readonly clients: readonly Redis[],
    readonly settings: RedisCacheSettings,
    private readonly log: Logger,
  ) {}

  /**
   * Opens the cache: connects each pooled connection within `connect_timeout`. A refusal no retry
   * cures (a wrong password or user, a db Redis does not have, unreadable TLS files) throws
   * `Failed to initialize RedisCache: ...`; a Redis that is down or unreachable only logs a warning,
   * and the cache serves misses until it is back.
   */
  static async open(settings: Readonly<Record<string, string>>, options: RedisCacheOptions = {}): Promise<RedisResponseCache> {
    const log = options.log ?? silentLogger;
    const parsed = parseRedisSettings(settings, options.env);
    for (const name of parsed.ignored ?? []) {
      log.warn(`--cache-config redis,${name} has no effect without --cache-config redis,tls_enabled=true (Triton ignores it too)`);
    }
    let tls: ConnectionOptions | undefined;
    try {
      tls = parsed.tls ? await tlsOptions(parsed.tls, parsed.host) : undefined;
    } catch (err) {
      throw new Error(`Failed to initialize RedisCache: ${(err as Error).message}`);
    }
    const clients = Array.from(
      { length: parsed.poolSize },
      () =>
        new Redis({
          host: parsed.host,
          port: parsed.port,
          db: parsed.db,
          ...(parsed.user ? { username: parsed.user } : {}),
          ...(parsed.password ? { password: parsed.password } : {}),
          ...(tls ? { tls } : {}),
          connectTimeout: parsed.connectTimeoutMs,
          commandTimeout: parsed.socketTimeoutMs,
          lazyConnect: true,
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
          autoResendUnfulfilledCommands: false,
          // Reconnects for as long as the server runs, at most once a second.
          retryStrategy: (times: number) => Math.min(times * 50, 1000),
          connectionName: 'tritium',
        }),
    );
    const cache = new RedisResponseCache(clients, parsed, log);
    const firstErrors = clients.map((c) => new Promise<Error>((resolve) => c.once('error', resolve)));
    for (const c of clients) c.on('error', (err: Error) => cache.onConnectionError(err));
    const results = await Promise.all(
      clients.map((c, i) =>
        c.connect().then(
          () => undefined,
          async () => Promise.race([firstErrors[i]!, new Promise<Error>((r) => setTimeout(() => r(new Error('connection closed')), 50))]),
        ),
      ),
    );
    const fatal = results.find((e) => e && FATAL_REPLY.test(e.message));
    if (fatal) {
      await cache.close();
      throw new Error(`Failed to initialize RedisCache: ${fatal.message}`);
    }
    const down = results.find((e) => e !== undefined);
    const where = `${parsed.host}:${parsed.port}`;
    if (down) log.warn(`redis cache at ${where} is unreachable (${down.message}); responses are not cached until it is back`);
    else log.info(`redis cache at ${where} connected (pool_size ${parsed.poolSize})`);
    return cache;
  }

  private client(): Redis {
    const c = this.clients[this.next]!;
    this.next = (this.next + 1) % this.clients.length;
    return c;
  }

  private onConnectionError(err: Error): void {
    if (this.closed) return;
    if (this.outage === 0) this.log.warn(`redis cache: ${err.message}; lookups are misses until it is back`);
    this.outage++;
  }

  private failure(op: 'lookup' | 'insert', err: unknown): void {
    this.failed = { ...this.failed, [op]: this.failed[op] + 1 };
    if (this.outage === 0) this.log.warn(`redis cache ${op} failed: ${(err as Error).message}; responses are served uncached while it fails`);
    this.outage++;
  }

  private success(): void {
    if (this.outage > 0) this.log.info(`redis cache is answering again (after ${this.outage} failures)`);
    this.outage = 0;
  }

  async lookup(key: string): Promise<CachedResponse | undefined> {
    let hash: Record<string, Buffer>;
    try {
      hash = await this.client().hgetallBuffer(key);
    } catch (err) {
      this.failure('lookup', err);
      return undefined;
    }
    this.success();
    let bytes = 0;
    for (const v of Object.values(hash)) bytes += v.length;
    if (bytes > this.settings.maxEntryBytes + 256) {
      this.failure('lookup', new Error(`entry '${key}' holds ${bytes} bytes, over max_entry_bytes ${this.settings.maxEntryBytes}`));
      return undefined;
    }
    try {
      return decodeEntry(hash);
    } catch (err) {
      // Whatever wrote it (another version, another program sharing the db), it is not served.
      this.failure('lookup', new Error(`entry '${key}' is unreadable: ${(err as Error).message}`));
      return undefined;
    }
  }

  /** Encodes `response` now (the caller may reuse its buffers once this returns) and writes it. */
  insert(key: string, response: CachedResponse): CacheInsertOutcome | Promise<CacheInsertOutcome> {
    const { fields, bytes } = encodeEntry(response);
    if (bytes > this.settings.maxEntryBytes) return 'too-large';
    return this.client()
      .hset(key, fields)
      .then(
        () => {
          this.success();
          return 'inserted' as const;
        },
        (err: unknown) => {
          this.failure('insert', err);
          return 'failed' as const;
        },
      );
  }

  errors(): CacheStoreErrors {
    return { ...this.failed };
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.clients.map((c) => c.quit().catch(() => c.disconnect())));
  }
}
