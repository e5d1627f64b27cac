/** Limits the transports enforce before anything reaches the server (flags set them). */
import { DEFAULT_MAX_CONNECTIONS } from './connection-plan.ts';

export interface TransportLimits {
  /** Largest request body, compressed or decompressed (`--http-max-input-size`, 64 MB). */
  readonly maxInputBytes: number;
  /**
   * Largest JSON part of an HTTP request (`--http-max-json-size`, 16 MB): a whole JSON body, or the
   * JSON header before binary tensor data. JSON costs far more to parse than its size (a 16 MB body of
   * one-element arrays takes seconds and hundreds of MB), so it gets its own, lower limit; binary
   * tensor data keeps `maxInputBytes`.
   */
  readonly maxJsonBytes: number;
  /** Largest element count of one tensor. */
  readonly maxTensorElements: number;
  /** Most HTTP headers per request. */
  readonly maxHeaderCount: number;
}

export const DEFAULT_LIMITS: TransportLimits = {
  maxInputBytes: 64 * 1024 * 1024,
  maxJsonBytes: 16 * 1024 * 1024,
  maxTensorElements: 1 << 28,
  maxHeaderCount: 100,
};

/**
 * How long a client may take to send a request, and how many connections it may hold. Without
 * these, Node keeps a connection that trickles its body for 300 s and accepts any number of them.
 */
export interface HttpConnectionLimits {
  /** Time to receive the request headers (nginx's client_header_timeout default: 60 s). */
  readonly headersTimeoutMs: number;
  /**
   * Time to receive the whole request, headers and body; waiting for the response does not count
   * (Node's requestTimeout). 60 s: nginx allows 60 s between two body reads (client_body_timeout);
   * a total bound also stops a body that trickles a byte a minute.
   */
  readonly requestTimeoutMs: number;
  /** Open connections at most; more are closed at once (Envoy's edge listener example: 10000), fitted below the descriptor limit (connection-plan.ts). */
  readonly maxConnections: number;
}

export const DEFAULT_HTTP_CONNECTION_LIMITS: HttpConnectionLimits = {
  headersTimeoutMs: 60_000,
  requestTimeoutMs: 60_000,
  maxConnections: DEFAULT_MAX_CONNECTIONS,
};
/** `--grpc-health-max-watches`' default: `grpc.health.v1.Health/Watch` streams open at once. */
export const DEFAULT_MAX_HEALTH_WATCHES = 1000;
