/**
 * The gRPC port's TCP listener, ours rather than grpc-js's: grpc-js's own listener accepts any
 * number of connections and keeps one that never calls for as long as its client likes, so about
 * 20,000 idle connections (HTTP/2 preface only) used up the process's descriptors. This one accepts
 * at most `--grpc-max-connections` (Node closes the rest on accept), closes a connection that has not
 * started a call within `--grpc-first-request-timeout-secs` (TLS handshake included), and hands every
 * accepted socket to grpc-js through its connection injector (`Server.createConnectionInjector`,
 * which runs the TLS handshake when the credentials ask for it, then HTTP/2, as grpc-js's own).
 */
import net from 'node:net';
import type { ConnectionInjector, ServerInterceptingCallInterface } from '@grpc/grpc-js';

export interface GrpcListenerOptions {
  readonly address: string;
  readonly port: number;
  /** `--grpc-max-connections`. */
  readonly maxConnections: number;
  /** `--grpc-first-request-timeout-secs`, in ms. */
  readonly firstRequestTimeoutMs: number;
}

interface Connection {
  readonly socket: net.Socket;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** A connection's key as grpc-js reports it for a call (the client's address and port). */
function keyOf(address: string | undefined, port: number | undefined): string {
  return `${address ?? ''}|${port ?? ''}`;
}

export class GrpcListener {
  private server: net.Server | undefined;
  private readonly connections = new Map<string, Connection>();

  constructor(private readonly options: GrpcListenerOptions) {}

  /** Connections open now. */
  get open(): number {
    return this.connections.size;
  }

  /** Binds and hands each accepted connection to `injector`; resolves with the bound port. */
  async listen(injector: ConnectionInjector): Promise<number> {
    const server = net.createServer({ noDelay: true }, (socket) => this.accept(socket, injector));
    server.maxConnections = this.options.maxConnections;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      // As HTTP's: an accept queue as deep as the cap (the kernel clamps it to net.core.somaxconn).
      const backlog = Math.min(65535, Math.max(511, this.options.maxConnections));
      server.listen({ host: this.options.address, port: this.options.port, backlog }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    return (server.address() as net.AddressInfo).port;
  }

  private accept(socket: net.Socket, injector: ConnectionInjector): void {
    // grpc-js handles errors once the HTTP/2 session exists; before that (a reset during the TLS
    // handshake) they would be unhandled.
    socket.on('error', () => undefined);
    const key = keyOf(socket.remoteAddress, socket.remotePort);
    const connection: Connection = {
      socket,
      timer: setTimeout(() => closeNow(socket), this.options.firstRequestTimeoutMs),
    };
    connection.timer!.unref();
    this.connections.set(key, connection);
    socket.once('close', () => {
      clearTimeout(connection.timer);
      if (this.connections.get(key) === connection) this.connections.delete(key);
    });
    injector.injectConnection(socket);
  }

  /**
   * A call started (grpc-server.ts's interceptor tells): the first-request timeout no longer applies
   * to its connection.
   */
  called(call: ServerInterceptingCallInterface): void {
    const info = call.getConnectionInfo();
    const connection = this.connections.get(keyOf(info.remoteAddress, info.remotePort));
    if (connection?.timer === undefined) return;
    clearTimeout(connection.timer);
    connection.timer = undefined;
  }

  /** Stops accepting; open connections stay (grpc-js's shutdown closes them). */
  stopAccepting(): void {
    this.server?.close();
    this.server = undefined;
  }

  /**
   * Destroys what is left after the shutdown (connections grpc-js never made a session of, e.g.
   * mid-handshake). A connection whose session the shutdown closed ends by itself within moments, its
   * last frames (a stream's final status) still being written: it gets `graceMs` to do so, as a
   * reset would lose them.
   */
  async destroyAll(graceMs = 250): Promise<void> {
    const open = [...this.connections.values()].map((c) => c.socket).filter((socket) => !socket.closed);
    if (open.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(open.map((socket) => new Promise((resolve) => socket.once('close', resolve)))),
      new Promise((resolve) => (timer = setTimeout(resolve, graceMs))),
    ]);
    clearTimeout(timer);
    for (const socket of open) if (!socket.closed) closeNow(socket);
  }
}

/**
 * Closes a connection with a TCP reset. Once its HTTP/2 session owns the socket, `destroy()` marks
 * the socket destroyed but leaves the descriptor open (Node 20): the client never saw a close.
 */
function closeNow(socket: net.Socket): void {
  socket.resetAndDestroy();
}
