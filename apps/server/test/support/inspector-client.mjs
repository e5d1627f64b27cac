// A debugger as VS Code or Chrome DevTools is one, over Node's inspector protocol (a WebSocket):
// it finds the model's bundle among the scripts, reads its inline source map, sets a breakpoint at
// a line of model.ts, and reports where execution paused, mapped back to model.ts.
// usage: node --experimental-websocket inspector-client.mjs <ws-url> <model.ts> <line>
// stdout: `READY <bundle line>` once the breakpoint is set, then `PAUSED <file>:<line>` (it resumes).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GREATEST_LOWER_BOUND, LEAST_UPPER_BOUND, TraceMap, generatedPositionFor, originalPositionFor } from '@jridgewell/trace-mapping';

const [url, tsFile, tsLineText] = process.argv.slice(2);
const tsLine = Number(tsLineText);
setTimeout(() => {
  console.error('inspector-client: timed out');
  process.exit(2);
}, 120_000).unref();

const ws = new WebSocket(url);
let nextId = 0;
const waiting = new Map();
const scripts = [];
const send = (method, params = {}) =>
  new Promise((resolve, reject) => {
    const id = ++nextId;
    waiting.set(id, { resolve, reject });
    ws.send(JSON.stringify({ id, method, params }));
  });
/** The bundle's source map and the folder its sources are relative to. */
let mapped;
ws.onmessage = (event) => {
  const m = JSON.parse(event.data);
  if (m.id !== undefined) {
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.error) w?.reject(new Error(JSON.stringify(m.error)));
    else w?.resolve(m.result);
  } else if (m.method === 'Debugger.scriptParsed') scripts.push(m.params);
  else if (m.method === 'Debugger.paused') {
    const top = m.params.callFrames[0].location;
    // The protocol's lines are 0-based, the source map library's 1-based.
    const at = originalPositionFor(mapped.map, { line: top.lineNumber + 1, column: top.columnNumber, bias: GREATEST_LOWER_BOUND });
    console.log(`PAUSED ${path.resolve(mapped.dir, at.source)}:${at.line}`);
    void send('Debugger.resume').then(() => process.exit(0));
  }
};
await new Promise((resolve, reject) => {
  ws.onopen = resolve;
  ws.onerror = reject;
});
await send('Debugger.enable');
for (const script of scripts) {
  if (!script.sourceMapURL?.startsWith('data:') || !script.url.startsWith('file:')) continue;
  const map = new TraceMap(Buffer.from(script.sourceMapURL.slice(script.sourceMapURL.indexOf(',') + 1), 'base64').toString('utf8'));
  const dir = path.dirname(fileURLToPath(script.url));
  const source = map.sources.find((s) => s !== null && path.resolve(dir, s) === tsFile);
  if (source === undefined) continue;
  mapped = { map, dir };
  const target = generatedPositionFor(map, { source, line: tsLine, column: 0, bias: LEAST_UPPER_BOUND });
  if (target.line === null) throw new Error(`no code of ${tsFile}:${tsLine} in the bundle`);
  await send('Debugger.setBreakpoint', { location: { scriptId: script.scriptId, lineNumber: target.line - 1, columnNumber: target.column } });
  console.log(`READY ${target.line}`);
  break;
}
if (!mapped) throw new Error(`no script with a source map naming ${tsFile}`);
