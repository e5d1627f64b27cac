/**
 * A real OTLP/HTTP trace endpoint for tests: a node:http server on 127.0.0.1 that takes
 * `POST /v1/traces` (application/x-protobuf), decodes each ExportTraceServiceRequest with the
 * OpenTelemetry protocol's own generated code (the official .proto files compiled by
 * @opentelemetry/otlp-transformer 0.52, installed as `otlp-protos`) and keeps the spans.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
interface Decoder {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: object): Record<string, unknown>;
}
const root = require('otlp-protos/build/src/generated/root.js') as {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: Decoder } } } } };
};
const ExportTraceServiceRequest = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly attributes: Record<string, string | number | boolean>;
  readonly events: { name: string; timeNs: bigint }[];
  readonly links: { traceId: string; spanId: string }[];
  readonly resource: Record<string, string | number | boolean>;
  readonly scope: string;
}

type AnyValue = { stringValue?: string; intValue?: string; boolValue?: boolean; doubleValue?: number };
const value = (v: AnyValue | undefined): string | number | boolean =>
  v?.stringValue ?? (v?.intValue !== undefined ? Number(v.intValue) : (v?.boolValue ?? v?.doubleValue ?? ''));
const attrs = (list: { key: string; value?: AnyValue }[] | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key, value(a.value)]));
const hex = (b64: string | undefined) => Buffer.from(b64 ?? '', 'base64').toString('hex');

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly contentTypes: string[] = [];
  private server: http.Server | undefined;
  port = 0;

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
          res.writeHead(404).end();
          return;
        }
        this.contentTypes.push(String(req.headers['content-type']));
        try {
          this.take(Buffer.concat(chunks));
          res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        } catch (e) {
          res.writeHead(400).end(String(e));
        }
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return `http://127.0.0.1:${this.port}/v1/traces`;
  }

  private take(body: Buffer): void {
    const msg = ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), { longs: String, bytes: String, defaults: true });
    for (const rs of msg['resourceSpans'] as Record<string, unknown>[]) {
      const resource = attrs((rs['resource'] as { attributes?: [] } | undefined)?.attributes);
      for (const ss of rs['scopeSpans'] as Record<string, unknown>[]) {
        const scope = String((ss['scope'] as { name?: string } | undefined)?.name ?? '');
        for (const s of ss['spans'] as Record<string, unknown>[]) {
          this.spans.push({
            traceId: hex(s['traceId'] as string),
            spanId: hex(s['spanId'] as string),
            parentSpanId: hex(s['parentSpanId'] as string),
            name: String(s['name']),
            kind: Number(s['kind']),
            startNs: BigInt(s['startTimeUnixNano'] as string),
            endNs: BigInt(s['endTimeUnixNano'] as string),
            attributes: attrs(s['attributes'] as []),
            events: ((s['events'] as { name: string; timeUnixNano: string }[]) ?? []).map((e) => ({ name: e.name, timeNs: BigInt(e.timeUnixNano) })),
            links: ((s['links'] as { traceId: string; spanId: string }[]) ?? []).map((l) => ({ traceId: hex(l.traceId), spanId: hex(l.spanId) })),
            resource,
            scope,
          });
        }
      }
    }
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
