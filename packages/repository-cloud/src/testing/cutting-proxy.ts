/**
 * A loopback TCP proxy that cuts connections mid-response: forwards to `target` untouched until
 * `cutAfter(bytes)` is armed, then destroys each connection once that many response bytes have
 * passed. A real network failure in the middle of a download, for tests.
 */
import net from 'node:net';

export interface CuttingProxy {
  readonly port: number;
  /** From now on, cut every connection after `bytes` response bytes (undefined: stop cutting). */
  cutAfter(bytes: number | undefined): void;
  /** Connections cut so far. */
  readonly cuts: number;
  close(): Promise<void>;
}

export async function startCuttingProxy(targetPort: number): Promise<CuttingProxy> {
  let limit: number | undefined;
  let cuts = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    let passed = 0;
    client.on('data', (d) => upstream.write(d));
    upstream.on('data', (d: Buffer) => {
      if (limit !== undefined && passed + d.length > limit) {
        client.write(d.subarray(0, Math.max(0, limit - passed)));
        cuts++;
        client.destroy();
        upstream.destroy();
        return;
      }
      passed += d.length;
      client.write(d);
    });
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    cutAfter: (bytes) => (limit = bytes),
    get cuts() {
      return cuts;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
