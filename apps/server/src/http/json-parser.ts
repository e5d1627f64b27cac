/**
 * Where HTTP JSON bodies are parsed. JSON.parse is synchronous and a large body blocks the thread
 * that runs it for as long as it takes (a 16 MB body of numbers about 0.3 s, of one-element arrays
 * several seconds), so bodies above `inlineBelowBytes` go to a worker thread; the main thread keeps
 * routing, and gets inference inputs back as finished byte buffers (transferred). Small bodies, the
 * common case, are parsed inline: a worker round trip would cost more than the parse.
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { InferError } from '@tritium/core';
import { compiledModule } from '@tritium/core/worker';
import type { TransportLimits } from '../protocol/limits.ts';
import { TransportError } from '../protocol/status.ts';
import { parseJsonBody } from './json-decode.ts';
import { planInfer, type InferPlan } from './infer-json.ts';
import { planGenerate, type GeneratePlan, type GenerateSpec } from './generate.ts';
import type { JsonTask, JsonTaskResult, WireJsonError } from './json-task.ts';

const WORKER_ENTRY = new URL('./json-worker-entry.ts', import.meta.url);

export interface JsonParserOptions {
  /** Bodies smaller than this are parsed on the calling thread (default 64 KiB). */
  readonly inlineBelowBytes?: number;
  /** Worker threads (default: one per spare core, at most 2). */
  readonly workers?: number;
  /** V8 old-generation limit of each worker; a body that needs more fails 413 (default 768 MB). */
  readonly workerHeapMb?: number;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
type TaskInput = DistributiveOmit<JsonTask, 'id'>;

interface Pending {
  readonly task: JsonTask;
  readonly transfer: ArrayBuffer[];
  resolve(value: unknown): void;
  reject(error: Error): void;
}

interface Slot {
  readonly worker: Worker;
  current?: Pending;
}

function fromWire(e: WireJsonError): Error {
  return e.kind === 'transport' ? new TransportError(e.message, e.httpStatus, e.grpcStatus) : new InferError(e.code, e.message);
}

export class JsonParser {
  private readonly inlineBelow: number;
  private readonly size: number;
  private readonly heapMb: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;

  constructor(options: JsonParserOptions = {}) {
    this.inlineBelow = options.inlineBelowBytes ?? 64 * 1024;
    this.size = Math.max(1, options.workers ?? Math.min(2, os.availableParallelism() - 1));
    this.heapMb = options.workerHeapMb ?? 768;
  }

  /** Any JSON body. */
  parse(bytes: Uint8Array): Promise<unknown> {
    if (bytes.length < this.inlineBelow) return settle(() => parseJsonBody(bytes));
    return this.submit({ kind: 'json', bytes });
  }

  /** An inference JSON header (see planInfer), `binaryLength` bytes of binary data after it. */
  planInfer(bytes: Uint8Array, binaryLength: number, model: string, limits: TransportLimits): Promise<InferPlan> {
    if (bytes.length < this.inlineBelow) return settle(() => planInfer(parseJsonBody(bytes), bytes, binaryLength, model, limits));
    return this.submit({ kind: 'infer', bytes, binaryLength, model, limits }) as Promise<InferPlan>;
  }

  /** A generate body (see planGenerate). */
  planGenerate(bytes: Uint8Array, spec: GenerateSpec, model: string, limits: TransportLimits): Promise<GeneratePlan> {
    if (bytes.length < this.inlineBelow) return settle(() => planGenerate(parseJsonBody(bytes), bytes, spec, model, limits));
    return this.submit({ kind: 'generate', bytes, spec, model, limits }) as Promise<GeneratePlan>;
  }

  /** Stops the workers; queued and running parses fail UNAVAILABLE. */
  async close(): Promise<void> {
    this.closed = true;
    const stopping = new InferError('UNAVAILABLE', 'the server is stopping');
    for (const p of this.queue.splice(0)) p.reject(stopping);
    const slots = this.slots.splice(0);
    for (const s of slots) s.current?.reject(stopping);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private submit(input: TaskInput): Promise<unknown> {
    if (this.closed) return Promise.reject(new InferError('UNAVAILABLE', 'the server is stopping'));
    // The worker gets the bytes without a copy when they are a whole ArrayBuffer of their own (a
    // JSON-only body); a header sliced from a larger body is copied, since the rest stays here.
    // `new Uint8Array(view)` copies: a body is a Buffer, whose slice() is a view of the same memory,
    // and transferring that view's buffer detached the binary part the main thread still reads.
    const exact = input.bytes.byteOffset === 0 && input.bytes.byteLength === input.bytes.buffer.byteLength && input.bytes.buffer instanceof ArrayBuffer;
    const bytes = exact ? input.bytes : new Uint8Array(input.bytes);
    const task = { ...input, bytes, id: this.nextId++ } as JsonTask;
    return new Promise((resolve, reject) => {
      this.queue.push({ task, transfer: [bytes.buffer as ArrayBuffer], resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => !s.current);
      if (!slot && this.slots.length < this.size) slot = this.spawn();
      if (!slot) return;
      const next = this.queue.shift()!;
      slot.current = next;
      // Held while it parses (the caller awaits the result), let go when idle (see spawn).
      slot.worker.ref();
      slot.worker.postMessage(next.task, next.transfer);
    }
  }

  private spawn(): Slot {
    const worker = new Worker(compiledModule(WORKER_ENTRY), {
      resourceLimits: { maxOldGenerationSizeMb: this.heapMb },
      // Compiled code with the default export conditions, whatever flags started this process.
      execArgv: [],
      stdout: false,
      stderr: false,
    });
    const slot: Slot = { worker };
    worker.on('message', (m: JsonTaskResult) => {
      const p = slot.current;
      if (!p || p.task.id !== m.id) return;
      slot.current = undefined;
      if (m.ok) p.resolve(m.value);
      else p.reject(fromWire(m.error));
      this.dispatch();
      if (!slot.current) slot.worker.unref();
    });
    const lost = (error: Error) => {
      const i = this.slots.indexOf(slot);
      if (i < 0) return;
      this.slots.splice(i, 1);
      const p = slot.current;
      slot.current = undefined;
      if (p) {
        const oom = (error as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY';
        p.reject(
          oom
            ? new TransportError(`the JSON request body needs more than the parser's ${this.heapMb} MB to parse; send tensors in binary form`, 413)
            : new InferError('INTERNAL', `the JSON parser worker failed: ${error.message}`),
        );
      }
      if (!this.closed) this.dispatch();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`exited with code ${code}`)));
    // An idle worker must not keep a stopping process alive (a parse in progress does, like the
    // worker host's instances). After the listeners: Node refs a worker's message port again when a
    // 'message' listener is added, so an unref() before it is undone and the process never exits.
    worker.unref();
    this.slots.push(slot);
    return slot;
  }
}

function settle<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (e) {
    return Promise.reject(e as Error);
  }
}
