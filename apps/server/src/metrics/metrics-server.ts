/** The metrics transport: `GET /metrics` in Prometheus text format on its own port (Triton: 8002). */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { InferenceServerApi, Logger } from '@tritium/core';
import type { CustomFamilySnapshot } from '@tritium/core/metrics';
import { CpuSampler, renderMetrics } from './prometheus.ts';

export class MetricsTransport {
  private server: http.Server | undefined;
  private boundPort = 0;
  private readonly cpu = new CpuSampler();

  constructor(
    private readonly api: InferenceServerApi,
    private readonly options: {
      address: string;
      port: number;
      /** `--metrics-max-connections` (as fitted below the descriptor limit, connection-plan.ts). */
      maxConnections: number;
      counterLatencies?: boolean;
      /** The transports' own gauges (transport-gauges.ts), after the models' custom families. */
      gauges?: () => readonly CustomFamilySnapshot[];
    },
    private readonly log: Logger,
  ) {}

  get port(): number {
    return this.boundPort;
  }

  async start(): Promise<number> {
    const server = http.createServer((req, res) => {
      req.resume();
      const path = (req.url ?? '/').split('?')[0];
      if (path !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
        return;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { 'content-type': 'text/plain' }).end('Method Not Allowed');
        return;
      }
      try {
        const body = renderMetrics(this.api.metrics(), this.cpu, { counterLatencies: this.options.counterLatencies !== false, custom: [...(this.api.customMetrics?.() ?? []), ...(this.options.gauges?.() ?? [])] });
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8; version=0.0.4', 'content-length': Buffer.byteLength(body) });
        res.end(req.method === 'HEAD' ? undefined : body);
      } catch (e) {
        this.log.error(`metrics: ${(e as Error).message}`);
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable');
      }
    });
    // A few scrapers use this port: a flood of it holds no more descriptors than this; Node closes the rest on accept.
    server.maxConnections = this.options.maxConnections;
    server.headersTimeout = 10_000;
    server.requestTimeout = 10_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, this.options.address, () => resolve());
    });
    this.server = server;
    this.boundPort = (server.address() as AddressInfo).port;
    return this.boundPort;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
