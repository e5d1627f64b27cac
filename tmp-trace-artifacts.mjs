// One request through sentiment_ensemble, traced to a Triton trace file and to OTLP (closing-note artifact; not committed).
import http from 'node:http';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
const require = createRequire(import.meta.url);
const root = require('otlp-protos/build/src/generated/root.js');
const Req = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const OUT = '/work/coord/reports/obs-artifacts';
const spans = [];
const receiver = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const msg = Req.toObject(Req.decode(Buffer.concat(chunks)), { longs: String, bytes: String });
    for (const rs of msg.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) for (const s of ss.spans ?? []) spans.push({ resource: rs.resource, scope: ss.scope?.name, ...s });
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});
await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
const otlpPort = receiver.address().port;

async function serveAndInfer(traceArgs) {
  const child = spawn(process.execPath, ['apps/server/bin/tritium.mjs', 'serve', '--model-repository', 'model_repository', '--http-address=127.0.0.1', '--grpc-address=127.0.0.1', '--metrics-address=127.0.0.1', '--http-port=0', '--grpc-port=0', '--metrics-port=0', ...traceArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.on('data', (c) => (text += c));
  child.stderr.on('data', (c) => (text += c));
  const port = await new Promise((ok) => { const t = setInterval(() => { const m = /Started HTTPService at [^:\s]+:(\d+)/.exec(text); if (m && /Started GRPC/.test(text)) { clearInterval(t); ok(Number(m[1])); } }, 50); });
  const body = JSON.stringify({ inputs: [{ name: 'TEXT', datatype: 'BYTES', shape: [1, 1], data: ['This is a fantastic technical article.'] }] });
  const reply = await fetch(`http://127.0.0.1:${port}/v2/models/sentiment_ensemble/infer`, { method: 'POST', body, headers: { 'content-type': 'application/json', traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } });
  const answer = await reply.text();
  await new Promise((r) => setTimeout(r, 2500));
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  return answer;
}

const file = `${OUT}/trace.json`;
const a1 = await serveAndInfer(['--trace-config', 'triton,file=' + file, '--trace-config', 'rate=1', '--trace-config', 'level=TIMESTAMPS']);
const a2 = await serveAndInfer(['--trace-config', 'mode=opentelemetry', '--trace-config', `opentelemetry,url=http://127.0.0.1:${otlpPort}/v1/traces`, '--trace-config', 'rate=1', '--trace-config', 'level=TIMESTAMPS', '--trace-config', 'opentelemetry,resource=service.name=tritium-example']);
receiver.close();
const hex = (b) => Buffer.from(b ?? '', 'base64').toString('hex');
const summary = spans.map((s) => ({ name: s.name, traceId: hex(s.traceId), spanId: hex(s.spanId), parentSpanId: hex(s.parentSpanId), durationMs: (Number(BigInt(s.endTimeUnixNano) - BigInt(s.startTimeUnixNano)) / 1e6).toFixed(3), attributes: Object.fromEntries((s.attributes ?? []).map((a) => [a.key, Object.values(a.value ?? {})[0]])), events: (s.events ?? []).map((e) => e.name), links: (s.links ?? []).length }));
writeFileSync(`${OUT}/otlp-spans.json`, JSON.stringify(summary, null, 2));
console.log('file answer:', a1);
console.log('otlp answer:', a2);
console.log('trace file entries:', JSON.parse(readFileSync(file, 'utf8')).length);
console.log('otlp spans:', summary.length);
