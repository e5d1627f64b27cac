/**
 * The JSON worker: parses large HTTP JSON bodies off the main thread (strict UTF-8, bounded nesting,
 * JSON.parse) and, for inference and generate bodies, checks the request and converts JSON tensor
 * data to bytes here too, so the main thread only receives finished buffers (transferred, not
 * copied). Started by json-parser.ts; one task at a time.
 */
import { parentPort } from 'node:worker_threads';
import { InferError } from '@tritium/core';
import { TransportError } from '../protocol/status.ts';
import { parseJsonBody } from './json-decode.ts';
import { planInfer } from './infer-json.ts';
import { planGenerate } from './generate.ts';
import type { JsonTask, JsonTaskResult, WireJsonError } from './json-task.ts';

function run(task: JsonTask): unknown {
  const json = parseJsonBody(task.bytes);
  if (task.kind === 'json') return json;
  if (task.kind === 'infer') return planInfer(json, task.bytes, task.binaryLength, task.model, task.limits);
  return planGenerate(json, task.bytes, task.spec, task.model, task.limits);
}

/** Buffers that can move to the main thread without a copy: whole, fresh ArrayBuffers of tensor data. */
function transferables(value: unknown): ArrayBuffer[] {
  if (typeof value !== 'object' || value === null || !('inputs' in value) || !Array.isArray(value.inputs)) return [];
  const out: ArrayBuffer[] = [];
  for (const input of value.inputs as { data?: unknown; source?: { data?: unknown } }[]) {
    const data = input.source?.data ?? input.data;
    if (data instanceof Uint8Array && data.byteOffset === 0 && data.byteLength === data.buffer.byteLength && data.buffer instanceof ArrayBuffer) {
      if (!out.includes(data.buffer)) out.push(data.buffer);
    }
  }
  return out;
}

function wireError(e: unknown): WireJsonError {
  if (e instanceof TransportError) return { kind: 'transport', message: e.message, httpStatus: e.httpStatus, grpcStatus: e.grpcStatus };
  const err = InferError.from(e);
  return { kind: 'infer', code: err.code, message: err.message };
}

const port = parentPort!;
port.on('message', (task: JsonTask) => {
  let reply: JsonTaskResult;
  let transfer: ArrayBuffer[] = [];
  try {
    const value = run(task);
    transfer = transferables(value);
    reply = { id: task.id, ok: true, value };
  } catch (e) {
    reply = { id: task.id, ok: false, error: wireError(e) };
  }
  port.postMessage(reply, transfer);
});
