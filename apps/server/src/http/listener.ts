/**
 * The HTTP(S) listener: node:http's server with the connection limits (`--http-headers-timeout-secs`,
 * `--http-request-timeout-secs`, `--http-max-connections`), TLS when asked, and an accept backlog as
 * deep as the connection cap, listening on the transport's address and port.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { loadTlsMaterial, type TlsOptions } from '../protocol/tls.ts';
import { DEFAULT_HTTP_CONNECTION_LIMITS, type HttpConnectionLimits } from '../protocol/limits.ts';

export interface ListenerOptions {
  readonly address: string;
  readonly port: number;
  readonly tls?: TlsOptions;
  readonly connections?: HttpConnectionLimits;
}

/** Creates the server with `handler` for its requests and `onConnection` for each new connection, and listens. */
export async function listen(
  options: ListenerOptions,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  onConnection: (socket: Socket) => void,
): Promise<http.Server> {
  const limits = options.connections ?? DEFAULT_HTTP_CONNECTION_LIMITS;
  const serverOptions: http.ServerOptions = {
    keepAlive: true,
    maxHeaderSize: 64 * 1024,
    // A headers timeout above the request timeout is an error in Node; the smaller one wins anyway.
    headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
    requestTimeout: limits.requestTimeoutMs,
    // Node checks both timeouts on this interval (30 s by default, which would add up to 30 s to each).
    connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs, limits.requestTimeoutMs),
  };
  const tls = options.tls && loadTlsMaterial('http', options.tls);
  const server: http.Server = tls
    ? https.createServer(
        {
          ...serverOptions,
          cert: tls.cert,
          key: tls.key,
          // Mutual TLS: a client without a certificate signed by `ca` fails the handshake.
          ...(tls.mutual ? { ca: tls.ca, requestCert: true, rejectUnauthorized: true } : {}),
        },
        handler,
      )
    : http.createServer(serverOptions, handler);
  server.maxConnections = limits.maxConnections;
  server.on('connection', onConnection);
  // Node drops headers past maxHeadersCount silently; keep its default (2000) as the hard bound and
  // answer 431 ourselves above the configured limit.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Node's default accept backlog is 511: when thousands of clients connect at once (c=2000), the
    // kernel drops SYNs past it (ListenOverflows) and a health probe's connection waits for SYN
    // retransmits (1 s, 3 s, 7 s): probes timed out at 10 s. Ask for a queue as deep as the
    // connection cap; the kernel clamps it to net.core.somaxconn.
    server.listen({ port: options.port, host: options.address, backlog: Math.min(65535, Math.max(511, limits.maxConnections)) }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}
